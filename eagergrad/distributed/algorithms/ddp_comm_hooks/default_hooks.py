"""DDP's built-in communication hooks, as torch's default_hooks: each gets a GradBucket
and returns a future of the reduced (averaged) bucket buffer."""
from ... import distributed_c10d as dist
from .... import _dtypes as D


def _allreduce_fut(process_group, tensor):
    """Average `tensor` over the group (divide, then all-reduce the sum)."""
    group = process_group if process_group is not None else dist.group.WORLD
    tensor.div_(group.size())
    return dist.all_reduce(tensor, group=group, async_op=True).get_future().then(
        lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """The bucket's gradients averaged, as DDP does without a hook."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    group = process_group if process_group is not None else dist.group.WORLD
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(group.size())
    fut = dist.all_reduce(compressed, group=group, async_op=True).get_future()

    def decompress(fut):
        out = bucket.buffer()
        out.copy_(fut.value()[0])
        return out
    return fut.then(decompress)


def fp16_compress_hook(process_group, bucket):
    """The bucket averaged in float16 (cast, divide, all-reduce, cast back)."""
    return _compress_hook(D.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """The bucket averaged in bfloat16."""
    return _compress_hook(D.bfloat16, process_group, bucket)
