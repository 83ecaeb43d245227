"""A stand-in for the `retrying` package (not installed here): `retry(...)` runs the function once, without retries."""


def retry(*args, **kwargs):
    if len(args) == 1 and callable(args[0]) and not kwargs:  # `@retry` without arguments
        return args[0]
    return lambda function: function
