"""While a batch runs, the objects that existed before it stay out of the cycle collector's passes.

A full collection visits every object the collector tracks. In a kernel that is pydantic-ai's ~111k
objects at least, plus whatever the notebook holds, and a batch of short rows triggers several full
collections per 1,000 rows: with 20 ms rows at concurrency 64 the collector took 29% of the wall time
(bench/results/HISTORY-sessions-1-17.md §7f). `gc.freeze()` moves every tracked object to the permanent
generation, which collections skip; `gc.unfreeze()` puts them back in the oldest generation when the last
batch ends.
Both are O(1). The batch's own garbage is collected as usual, and objects freed by reference counting
are freed at once, frozen or not; only a cycle among objects from before the batch waits for its end.

Nothing is done when the collector is off or something else has frozen objects (a pre-fork server):
unfreezing at the end would undo theirs.
"""

from __future__ import annotations

import gc

_holders = 0
_frozen = False


def hold() -> None:
    """A batch starts: freeze the heap as it is, unless another batch already did (or must not)."""
    global _holders, _frozen
    if _holders == 0 and gc.isenabled() and gc.get_freeze_count() == 0:
        gc.freeze()
        _frozen = True
    _holders += 1


def release() -> None:
    """A batch ended: the last one to end unfreezes what the first one froze."""
    global _holders, _frozen
    if _holders == 0:
        return
    _holders -= 1
    if _holders == 0 and _frozen:
        _frozen = False
        gc.unfreeze()
