"""What a reader opens to understand one op's gradient rule: the rule's own
code, and every helper of minitape's it calls or names (followed through their
own calls), counted in lines and files (issue 31's "lines and files a reader
opens to understand multiply's gradient").

    python -m tools.rule_reading Mul          # the summary
    python -m tools.rule_reading Mul --list   # each function, its file and lines

Not followed: public ops (`mt.multiply`, `mt.where`, ... : a rule that calls
one reads like the mathematics it writes), and the reverse-mode core a reader
has read first (`core/`: context, tensor, tape_entries, registry, backward;
and tape). A rule
the declaration machinery made leads to its row: a partial derivative such as
`lambda x, y, z: y` counts the lines of the statement that declares the op.
Lines are those of each whole definition, docstring included; a file counts
once however many definitions come from it.
"""
import inspect
import sys
import types

CORE = ("minitape.core.context", "minitape.core.tensor", "minitape.core.tape_entries",
        "minitape.core.registry", "minitape.core.backward", "minitape.tape")


def _public_ops():
    import minitape
    from minitape import ops
    found = set()
    for module in (minitape, ops, minitape.math, minitape.nn, minitape.linalg):
        for name in getattr(module, "__all__", dir(module)):
            value = getattr(module, name, None)
            if callable(value):
                found.add(id(value))
    return found


def _is_followed(obj, public):
    module = getattr(obj, "__module__", None) or ""
    return (isinstance(obj, (types.FunctionType, type)) and module.startswith("minitape")
            and module not in CORE and id(obj) not in public)


def _names(code):
    """The global and attribute names a code object (and the code it holds:
    lambdas, comprehensions, inner functions) uses."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _referenced(fn):
    """The objects a function's code names: its globals, its closure's cells,
    and `module.name` for a module it names."""
    code = getattr(fn, "__code__", None)
    if code is None:  # a class: its methods
        return [v for v in vars(fn).values() if isinstance(v, types.FunctionType)]
    scope = fn.__globals__
    out = [scope[n] for n in _names(code) if n in scope]
    for cell in fn.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        out += list(value) if type(value) is tuple else [value]  # (a row's partials)
    modules = [v for v in out if isinstance(v, types.ModuleType)]
    out += [vars(m)[n] for m in modules for n in _names(code) if n in vars(m)]
    return out


def reading(op_type):
    """[(qualified name, file, lines)] of what a reader opens for the rule of
    `op_type`, in the order first met."""
    import minitape  # noqa: F401
    from minitape.core import registry
    rule = registry._rules[op_type][0]
    public = _public_ops()
    seen, order, stack = set(), [], [rule]
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        try:
            lines, _ = inspect.getsourcelines(fn)
            path = inspect.getsourcefile(fn)
        except (OSError, TypeError):
            continue
        order.append((f"{fn.__module__}.{fn.__qualname__}", path, len(lines)))
        for obj in _referenced(fn):
            if _is_followed(obj, public) and id(obj) not in seen:
                stack.append(obj)
    return order


def main(argv):
    op_type = argv[0] if argv and not argv[0].startswith("-") else "Mul"
    found = reading(op_type)
    files = sorted({path for _, path, _ in found})
    print(f"{op_type}'s gradient: {sum(n for _, _, n in found)} lines in {len(found)} "
          f"definitions over {len(files)} files")
    if "--list" in argv:
        for name, path, n in found:
            print(f"  {n:4d}  {name}  ({path.split('minitape/', 1)[-1]})")


if __name__ == "__main__":
    main(sys.argv[1:])
