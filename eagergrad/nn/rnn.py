"""torch.nn: RNN/LSTM/GRU and cells."""
__all__ = []
