"""Names a module imports for helpers training never calls: each raises when called."""


def unused(module, *names):
    def make(name):
        def called(*args, **kwargs):
            raise NotImplementedError(f"{module}.{name} is not stood in (benchmarks/realcode/shims/packages)")
        called.__name__ = name
        return called
    return {name: make(name) for name in names}
