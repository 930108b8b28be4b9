"""The overlay of staged in-place patches (purehep/io/sink.py Overlay) against a plain model:
every patch kept in a list, reads seeing them later over earlier, the commit leaving each
byte as the last stage put it. Random stages of patches (touching, overlapping, in several
orders), freed ranges between them; merged and trimmed patches must not change what a read
sees or what the commit writes outside the freed bytes."""
import random

import pytest

from purehep.io.sink import SMALL_PATCH, Overlay

SIZE = 3 * SMALL_PATCH


def _model_read(patches, base):
    out = bytearray(base)
    for order, a, d in patches:              # (staging order: later over earlier)
        out[a:a + len(d)] = d
    return out


@pytest.mark.parametrize("seed", range(40))
def test_overlay_against_a_plain_model(seed):
    r = random.Random(seed)
    base = bytes(r.randrange(256) for _ in range(SIZE))
    ov, staged, freed = Overlay(), [], set()
    for _ in range(r.randrange(1, 30)):
        stage = []
        at = r.randrange(SIZE - 64)
        for _ in range(r.randrange(1, 5)):
            n = r.choice([1, 8, 24, 24, 200, SMALL_PATCH + 10])
            if r.random() < 0.6:                 # next to the last one: merged
                at = min(max(0, at + r.choice([-n, 24, 0, 8])), SIZE - n)
            else:
                at = r.randrange(SIZE - n)
            stage.append((r.choice([0.2, 0.2, 1, 2]), at, bytes(r.randrange(256)
                                                                for _ in range(n))))
        stage.sort(key=lambda p: p[0])          # (a stage's steps come in increasing order)
        ov.add_stage(stage)
        staged += stage
        freed -= {i for _, a, d in stage for i in range(a, a + len(d))}
        if r.random() < 0.3:                     # space freed: its bytes no longer matter
            a, n = r.randrange(SIZE - 100), r.randrange(1, 100)
            ov.drop(a, n)
            freed |= set(range(a, a + n))
        want = _model_read(staged, base)
        for _ in range(5):
            a = r.randrange(SIZE)
            n = r.randrange(1, SIZE - a + 1)
            got = ov.apply(a, base[a:a + n])
            assert all(got[i - a] == want[i] for i in range(a, a + n) if i not in freed)
    out = bytearray(base)
    for order, a, d in ov.ordered():
        out[a:a + len(d)] = d
    want = _model_read(staged, base)
    assert all(out[i] == want[i] for i in range(SIZE) if i not in freed)
    orders = [o for o, _, _ in ov.ordered()]
    assert orders == sorted(orders)


def test_touching_patches_of_one_order_merge():
    """A name added to a heap's data segment at each stage (24 bytes after the last) stays
    one patch, so that reading the segment applies one patch, not one per stage; a patch
    of another order touching one keeps them apart."""
    ov = Overlay()
    for i in range(1000):
        ov.add_stage([(0.2, 1000 + 24 * i, bytes([i % 256]) * 24)])
    assert len(ov.patches) == 1
    got = ov.apply(1000, bytes(24_000))
    assert got == b"".join(bytes([i % 256]) * 24 for i in range(1000))
    ov.add_stage([(2, 100, b"x" * 600)])
    ov.add_stage([(0.2, 1000 + 24_000, b"y" * 24)])
    assert len(ov.patches) == 2
    ov.add_stage([(0.2, 700, b"z" * 24)])       # touches the order-2 patch only: apart
    assert len(ov.patches) == 3
