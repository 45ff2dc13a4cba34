"""torch.nn.utils.clip_grad: clip_grad_norm_, clip_grad_value_, get_total_norm, clip_grads_with_norm_."""
__all__ = []
