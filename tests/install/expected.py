"""The exact output of each program in docs/examples/ at np ranks, computed independently."""

import re


def hello_c(np):
    def cell(width, v):
        return ('-' if v < 0 else str(v)).rjust(width)

    half = np // 2
    evens_sum = sum(range(0, np, 2))
    lines = ['%d processes; MPI_COMM_WORLD is a range: no; range 1..0 gives MPI_ERR_ARG: yes' % np,
             'world  evens  sum of evens  upper  bcast from upper rank 0  evens is a range']
    for r in range(np):
        even = r % 2 == 0
        upper = r >= half
        lines.append(cell(5, r) + cell(7, r // 2 if even else -1) +
                     cell(14, evens_sum if even else -1) + cell(7, r - half if upper else -1) +
                     cell(25, 100 + half if upper else -1) + ('yes' if even else '-').rjust(18))
    return '\n'.join(lines) + '\n'


def hello_cxx(np):
    h = (np + 1) // 2
    lines = ['%d processes, halves of %d and %d' % (np, h, np - h),
             'world  half  received  status.MPI_SOURCE  sum in half']
    for i in range(np):
        start, n = (0, h) if i < h else (h, np - h)
        r = i - start
        left = (r + n - 1) % n
        lines.append('%5d %5d %9d %18d %12d' % (i, r, start + left, left,
                                                 sum(range(start, start + n))))
    return '\n'.join(lines) + '\n'


def sort_cxx(np):
    values = sorted((i * 7919 + rank * 104729 + 13) % 1000
                    for rank in range(np) for i in range(10 + 7 * rank))
    n = len(values)
    lines = ['rank  count  first  last']
    start = 0
    for r in range(np):
        count = n // np + (1 if r < n % np else 0)
        mine = values[start:start + count]
        start += count
        lines.append('%4d %6d %6d %5d' % (r, count, mine[0] if mine else -1,
                                          mine[-1] if mine else -1))
    return '\n'.join(lines) + '\n'


def preload_c(np, ranges):
    lines = ['range communicators: %s' % ('yes' if ranges else 'no')]
    for r in range(np):
        first = r - r % 2
        members = [m for m in (first, first + 1) if m < np]
        lines.append("rank %d: rank %d in its pair, sum of the pair's world ranks %d" %
                     (r, r - first, sum(members)))
    return '\n'.join(lines) + '\n'


def hello_f(np):
    h = (np + 1) // 2
    lines = ['world  half  sum in half  bcast from half rank 0']
    for i in range(np):
        start, n = (0, h) if i < h else (h, np - h)
        lines.append('%5d%6d%13d%24d' % (i, i - start, sum(range(start, start + n)), 100 + start))
    return '\n'.join(lines) + '\n'


def many_dups(alive, n):
    return ('live duplicates of MPI_COMM_SELF: %d of %d on every process%s; messages ok\n' %
            (alive, n, ' (then MPI_Comm_dup failed)' if alive < n else ''))


def many_dups_alive(output):
    """The count many_dups reported, if its output is well-formed for that count."""
    m = re.match(r'live duplicates of MPI_COMM_SELF: (\d+) of (\d+)', output)
    if not m or output != many_dups(int(m.group(1)), int(m.group(2))):
        return None
    return int(m.group(1))
