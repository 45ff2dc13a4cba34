"""torch._utils' helpers that torch exports at its top level: `classproperty`.

>>> import eagergrad as torch
>>> class A:
...     @torch.classproperty
...     def name(cls):
...         return cls.__name__
>>> A.name, A().name
('A', 'A')
"""


class _ClassPropertyDescriptor:
    def __init__(self, fget, fset=None):
        self.fget = fget

    def __get__(self, instance, owner=None):
        if owner is None:
            owner = type(instance)
        return self.fget.__get__(instance, owner)()


def classproperty(func):
    """A read-only property of the class (and of its instances): `func(cls)`."""
    if not isinstance(func, (classmethod, staticmethod)):
        func = classmethod(func)
    return _ClassPropertyDescriptor(func)
