"""Medians, percentiles and ratios for the benchmark reports."""


def percentile(values, fraction):
    """Linear interpolation between closest ranks; None for no values."""
    ordered = sorted(values)
    if not ordered:
        return None
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values):
    return percentile(values, 0.5)


def summary(values):
    return {"n": len(values), "median": median(values), "p95": percentile(values, 0.95),
            "p99": percentile(values, 0.99), "min": min(values) if values else None,
            "max": max(values) if values else None}


def mean(values):
    """The arithmetic mean; None for no values."""
    return sum(values) / len(values) if values else None


def ratio(a, b):
    """a / b, or None when either is missing or b is zero."""
    if a is None or b is None or b == 0:
        return None
    return a / b
