"""Helpers several nn.functional families share."""


def _dims(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _tuple(v, n):
    """An int (or a 1-sequence) repeated n times, as torch's IntArrayRef[n] parser does."""
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(x) for x in v)
    return v * n if len(v) == 1 else v


def assert_int_or_pair(arg, arg_name, message):
    """AssertionError(message.format(arg_name)) unless arg is an int or has two elements.

    >>> from eagergrad.nn.functional import assert_int_or_pair
    >>> assert_int_or_pair((2, 3), "kernel_size", "{} must be int or pair")
    """
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function calling if_true or if_false by the boolean argument `arg_name` (keyword) or
    at position `arg_index`, `default` when absent, as torch's F.max_pool2d picks
    return_indices. The function takes the docstring of whichever of the two has one
    (RuntimeError if both do).

    >>> from eagergrad.nn.functional import boolean_dispatch
    >>> f = boolean_dispatch("flag", 1, False, lambda x, flag=False: -x,
    ...                      lambda x, flag=False: x, None, "f")
    >>> f(2), f(2, True), f(2, flag=True)
    (2, -2, -2)
    """
    def fn(*args, **kwargs):
        flag = default
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        if_true.__doc__ = if_false.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is not None:
        if_false.__doc__ = if_true.__doc__
    elif if_false.__doc__ is not None:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = if_true.__doc__
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn
