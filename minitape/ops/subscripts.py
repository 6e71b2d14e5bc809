"""Einsum's subscripts: an equation's letters written out, and a gradient's
contraction written so that NumPy's einsum can compute it.

A contraction's gradient for one operand swaps that operand's subscripts with
the output's: for z = einsum('ij,jk->ik', a, b), da = einsum('ik,jk->ij', g, b).
NumPy's einsum cannot write two of the swapped equations as they stand:

- a letter of the operand that no other factor has ('i' in 'ij->j'): z is a
  sum over it, so every entry along it gets the same gradient, a vector of
  ones carries it back: einsum('j,i->ij', g, ones);
- a letter the operand repeats (a diagonal, 'ii->i'): an output cannot repeat
  a letter, so the diagonal is written out through an identity matrix:
  einsum('i,ij->ij', g, eye).

`written` does both, for einsum's rules (`products.py`) and for the rules of
the masked contraction (`zero_times_inf.py`), whose operands are alike.
"""
import functools

import numpy as np

from ..core.tensor import Tensor

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # string.ascii_letters


def fresh_letters(*used):
    """The letters that none of the strings `used` has, in order."""
    taken = set("".join(used))
    return [c for c in LETTERS if c not in taken]


def parse_subscripts(equation, ndims, op_name="einsum"):
    """Explicit subscripts for each input and the output, with '...' replaced
    by fresh letters, e.g. 'bxby->bxy' -> (['bxby'], 'bxy')."""
    ins, out = _parsed(equation, tuple(ndims), op_name)
    return list(ins), out


@functools.lru_cache(maxsize=512)  # (a rule parses the same few equations every step)
def _parsed(equation, ndims, op_name):
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(ndims):
        raise ValueError(f"{op_name}: equation {equation!r} names {len(ins)} operand(s), "
                         f"got {len(ndims)}")
    fresh = fresh_letters(eq)
    n_ell = max([nd - (len(s) - 3) for s, nd in zip(ins, ndims) if "..." in s] or [0])
    ell = "".join(fresh[:n_ell])
    expanded = []
    for s, nd in zip(ins, ndims):
        if "..." in s:
            k = nd - (len(s) - 3)
            s = s.replace("...", ell[n_ell - k:] if k else "")
        if len(s) != nd or not all(c in LETTERS for c in s):
            raise ValueError(f"{op_name}: subscripts {s!r} do not fit an operand of rank {nd} "
                             f"in {equation!r}")
        expanded.append(s)
    if not arrow:  # implicit output: the letters used once, in alphabetical order
        joined = "".join(expanded)
        out = ell + "".join(sorted(c for c in set(joined) if joined.count(c) == 1
                                   and c not in ell))
    else:
        out = out.replace("...", ell)
    return tuple(expanded), out


def written(terms, letters, sizes, fresh, dtype):
    """The contraction of `terms` ([(subscripts, tensor)]) to `letters`, written
    for NumPy's einsum: (terms, result letters, the positions of the identity
    matrices added). A letter of `letters` no term has comes through ones; a
    repeated one through an identity matrix on a letter from the iterator
    `fresh`. `sizes` gives each letter's size (1 if absent)."""
    terms = list(terms)
    present = set("".join(s for s, _ in terms))
    for c in dict.fromkeys(letters):
        if c not in present:
            terms.append((c, Tensor(np.ones(sizes.get(c, 1), dtype))))
    result, seen, eyes = "", set(), []
    for c in letters:
        if c in seen:
            d = next(fresh)
            eyes.append(len(terms))
            terms.append((c + d, Tensor(np.eye(sizes.get(c, 1), dtype=dtype))))
            result += d
        else:
            seen.add(c)
            result += c
    return terms, result, eyes
