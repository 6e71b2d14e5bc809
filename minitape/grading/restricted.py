"""The answer's code: what it may write, and what it can reach when it runs.

An answer is graded in a process of its own (`minitape.grading.processes`),
but it shares that process with trusted code: the check's inputs and run
parts, the spies that watch it, and the code that reports what it returned.
Two layers keep the answer away from them; the audit hook
(`minitape.grading.audit`) is a third, for what the process may do.

1. `check(text)`, before anything runs: the answer's source must parse and
   use no name or attribute starting with an underscore (`__globals__`,
   `_value`, `__class__`: where Python's introspection lives), call none of
   the builtins that reach around it (getattr, setattr, vars, eval, exec,
   compile, open, ...), import only from `IMPORTS`, and write attributes one
   at a time. Each refusal is one message that names the line.
2. `compile_answer(text)` rewrites every `obj.name` the answer reads into
   `_read(obj, "name")` and every `obj.name = value` into
   `_write(obj, "name", value)`, and the answer runs with `builtins_for()`, a
   builtins dict without the names above. At run time `_read` refuses a
   module that is not in `IMPORTS` and anything from a module in `DENIED`
   (so `np.core.numeric.builtins.getattr` stops at `core`), frames and code
   objects, and lets `str.format` read no attributes; `_write` refuses to
   change a module, a class, or an object of a class the answer or the
   notebook did not define.

Without 2, a purely static check is one chain of public attributes away from
Python's `getattr`, and a class's attributes can be replaced without any
audit event (CPython raises none for `SomeClass.attr = x`).
"""
import ast
import builtins
import importlib
import sys
import types

# Modules an answer may import, and reach as attributes (numpy.linalg is np.linalg).
IMPORTS = ("numpy", "numpy.linalg", "numpy.random", "numpy.testing", "numpy.fft",
           "minitape", "minitape.math", "minitape.linalg", "minitape.nn", "minitape.random",
           "minitape.autodiff", "minitape.saved_model", "minitape.layers", "minitape.test",
           "math", "cmath", "itertools", "functools", "collections", "collections.abc")
# Objects from these modules are out of an answer's reach, whatever the path to them.
DENIED = frozenset({
    "os", "posix", "nt", "sys", "subprocess", "_posixsubprocess", "ctypes", "_ctypes", "gc",
    "inspect", "importlib", "_imp", "pickle", "_pickle", "copyreg", "marshal", "types", "code",
    "codeop", "runpy", "socket", "_socket", "ssl", "threading", "_thread", "signal", "_signal",
    "resource", "atexit", "pty", "linecache", "traceback", "faulthandler", "tracemalloc",
    "sysconfig", "site", "zipimport", "pkgutil", "shutil", "multiprocessing", "concurrent",
    "asyncio", "unittest", "typing", "dataclasses", "enum", "abc", "operator", "_operator",
    "io", "_io", "weakref", "_weakref", "mmap", "select", "selectors", "tempfile", "pathlib",
    "glob", "fnmatch", "minitape.grading"})
FORBIDDEN_NAMES = frozenset({
    "getattr", "setattr", "delattr", "vars", "globals", "locals", "eval", "exec", "compile",
    "open", "breakpoint", "input", "help", "dir", "memoryview", "type", "exit", "quit",
    "copyright", "credits", "license"})
# Attributes that lead to frames and code, which hold every caller's variables.
FRAME_ATTRIBUTES = frozenset({
    "f_back", "f_locals", "f_globals", "f_builtins", "f_code", "f_trace", "gi_frame",
    "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "cr_origin", "ag_frame",
    "ag_code", "ag_await", "tb_frame", "tb_next", "co_consts", "co_code", "func_globals"})
DUNDER_METHODS = frozenset({"__init__", "__call__"})
_FRAME_TYPES = (types.FrameType, types.TracebackType, types.CodeType, types.CellType)
_SAFE_BUILTINS = (
    "abs", "all", "any", "bool", "callable", "chr", "complex", "dict", "divmod", "enumerate",
    "filter", "float", "format", "frozenset", "hash", "id", "int", "isinstance", "issubclass",
    "iter", "len", "list", "map", "max", "min", "next", "ord", "pow", "print", "property",
    "range", "repr", "reversed", "round", "set", "slice", "sorted", "staticmethod",
    "classmethod", "str", "sum", "super", "object", "tuple", "zip", "bin", "hex", "oct", "ascii",
    "bytes", "NotImplemented", "Ellipsis", "None", "True", "False")


class Refused(Exception):
    """Something an answer may not do, with the message a student reads."""


def _where(node):
    return f"line {getattr(node, 'lineno', '?')}"


class _Checker(ast.NodeVisitor):
    def __init__(self):
        self.problems = []
        self._class_depth = 0

    def refuse(self, node, message):
        self.problems.append(f"{_where(node)}: {message}")

    def _name(self, node, name):
        if name.startswith("_") and name != "_":
            self.refuse(node, f"the name '{name}' starts with an underscore: names like that "
                        "are Python's and the grader's, not an answer's (rename it)")

    def visit_Name(self, node):
        self._name(node, node.id)
        if isinstance(node.ctx, ast.Load) and node.id in FORBIDDEN_NAMES:
            self.refuse(node, f"'{node.id}' is not available to an answer")

    def visit_Attribute(self, node):
        if node.attr.startswith("_") and not (
                node.attr == "__init__" and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name) and node.value.func.id == "super"):
            self.refuse(node, f"'.{node.attr}': attributes starting with an underscore are "
                        "private (only super().__init__ is allowed)")
        elif node.attr in FRAME_ATTRIBUTES:
            self.refuse(node, f"'.{node.attr}' reads frames or code, which an answer may not")
        if isinstance(node.ctx, ast.Del):
            self.refuse(node, "an answer may not delete attributes")
        self.generic_visit(node)

    def _target(self, target, allow_attribute):
        if isinstance(target, ast.Attribute) and not allow_attribute:
            self.refuse(target, "set one attribute per assignment (obj.name = value)")
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element, False)
        elif isinstance(target, ast.Starred):
            self._target(target.value, False)

    def visit_Assign(self, node):
        for target in node.targets:
            self._target(target, True)
        self.generic_visit(node)

    def visit_For(self, node):
        self._target(node.target, False)
        self.generic_visit(node)

    def visit_comprehension(self, node):
        self._target(node.target, False)
        self.generic_visit(node)

    def visit_withitem(self, node):
        if node.optional_vars is not None:
            self._target(node.optional_vars, False)
        self.generic_visit(node)

    def _function(self, node):
        if not (self._class_depth and node.name in DUNDER_METHODS):
            self._name(node, node.name)
        for arg in (node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                    + [a for a in (node.args.vararg, node.args.kwarg) if a]):
            self._name(arg, arg.arg)
        depth, self._class_depth = self._class_depth, 0
        self.generic_visit(node)
        self._class_depth = depth

    def visit_FunctionDef(self, node):
        self._function(node)

    def visit_Lambda(self, node):
        for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            self._name(arg, arg.arg)
        self.generic_visit(node)

    def visit_ClassDef(self, node):
        self._name(node, node.name)
        if node.keywords:
            self.refuse(node, "a class statement may not pass keywords (metaclass=...)")
        self._class_depth += 1
        self.generic_visit(node)
        self._class_depth -= 1

    def visit_Global(self, node):
        for name in node.names:
            self._name(node, name)

    visit_Nonlocal = visit_Global

    def visit_Import(self, node):
        for alias in node.names:
            if alias.name not in IMPORTS:
                self.refuse(node, f"'import {alias.name}': an answer may import only "
                            + ", ".join(IMPORTS))
            if alias.asname:
                self._name(node, alias.asname)

    def visit_ImportFrom(self, node):
        if node.level or node.module not in IMPORTS:
            self.refuse(node, f"'from {'.' * node.level}{node.module or ''} import ...': an "
                        "answer may import only " + ", ".join(IMPORTS))
        for alias in node.names:
            if alias.name == "*":
                self.refuse(node, "'import *' hides what an answer uses: name each import")
            self._name(node, alias.asname or alias.name)

    def visit_ExceptHandler(self, node):
        if node.name:
            self._name(node, node.name)
        self.generic_visit(node)

    def _refused(what):
        def visit(self, node):
            self.refuse(node, f"{what} is not available to an answer")
        return visit

    visit_AsyncFunctionDef = _refused("'async def'")
    visit_Await = _refused("'await'")
    visit_AsyncFor = _refused("'async for'")
    visit_AsyncWith = _refused("'async with'")
    visit_Match = _refused("'match' (write if/elif)")


def check(text):
    """Raise Refused with one line per problem when the answer's source breaks
    the rules above (or does not parse)."""
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        raise Refused(f"line {error.lineno}: {error.msg}") from None
    checker = _Checker()
    checker.visit(tree)
    if checker.problems:
        raise Refused("\n".join(checker.problems))
    return tree


class _Rewrite(ast.NodeTransformer):
    """obj.name -> _read(obj, 'name'); obj.name = v -> _write(obj, 'name', v)."""

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and node.attr != "__init__":
            return ast.copy_location(ast.Call(ast.Name("_read", ast.Load()),
                                              [node.value, ast.Constant(node.attr)], []), node)
        return node

    def _set(self, target, value, node):
        call = ast.Call(ast.Name("_write", ast.Load()),
                        [target.value, ast.Constant(target.attr), value], [])
        return ast.copy_location(ast.Expr(call), node)

    def visit_Assign(self, node):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute):
            target = node.targets[0]
            target.value = self.visit(target.value)
            return self._set(target, self.visit(node.value), node)
        if any(isinstance(t, ast.Attribute) for t in node.targets):  # a.x = b = value
            temp = ast.Name("_value", ast.Store())
            statements = [ast.copy_location(ast.Assign([temp], self.visit(node.value)), node)]
            for target in node.targets:
                read = ast.Name("_value", ast.Load())
                if isinstance(target, ast.Attribute):
                    target.value = self.visit(target.value)
                    statements.append(self._set(target, read, node))
                else:
                    statements.append(ast.copy_location(
                        ast.Assign([self.visit(target)], read), node))
            return statements
        return self.generic_visit(node)

    def visit_AugAssign(self, node):
        if isinstance(node.target, ast.Attribute):  # a.x += v: a evaluated once
            obj = ast.Name("_target", ast.Store())
            first = ast.copy_location(ast.Assign([obj], self.visit(node.target.value)), node)
            current = ast.Call(ast.Name("_read", ast.Load()),
                               [ast.Name("_target", ast.Load()), ast.Constant(node.target.attr)],
                               [])
            new = ast.BinOp(current, node.op, self.visit(node.value))
            store = ast.Attribute(ast.Name("_target", ast.Load()), node.target.attr, ast.Store())
            return [first, self._set(store, new, node)]
        return self.generic_visit(node)

    def visit_AnnAssign(self, node):
        if isinstance(node.target, ast.Attribute) and node.value is not None:
            node.target.value = self.visit(node.target.value)
            return self._set(node.target, self.visit(node.value), node)
        return self.generic_visit(node)


def compile_answer(text, filename):
    """The answer's code object, checked and rewritten (raises Refused)."""
    tree = _Rewrite().visit(check(text))
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec")


# --- run time --------------------------------------------------------------------------

class Guard:
    """The functions rewritten answer code calls, and the builtins it gets.
    `notebook_classes` are the classes the notebook's own cells define (their
    objects an answer may change, as it may its own)."""

    def __init__(self, notebook_classes=()):
        for name in IMPORTS:
            importlib.import_module(name)
        self.modules = {id(sys.modules[name]) for name in IMPORTS}
        self.refused = {id(getattr(builtins, name)) for name in FORBIDDEN_NAMES
                        if hasattr(builtins, name)}
        self.refused |= {id(builtins.__import__), id(sys.modules), id(builtins.__dict__)}
        self.classes = set(notebook_classes)  # grows with the answer's own classes
        self.problems = []  # what was refused, even when the answer caught the error

    def refuse(self, message):
        self.problems.append(message)
        raise PermissionError(message)

    def allowed(self, value, name):
        """`value`, reached through the attribute `name`, if the answer may have it."""
        if isinstance(value, types.ModuleType):
            if id(value) not in self.modules:
                self.refuse(f"'.{name}' is the module {value.__name__}, which an answer may "
                            "not use")
            return value
        if id(value) in self.refused or isinstance(value, _FRAME_TYPES):
            self.refuse(f"'.{name}' is not available to an answer")
        try:
            owner = getattr(value, "__module__", None)
        except Exception:
            owner = None
        if isinstance(owner, str) and (owner in DENIED or owner.split(".")[0] in DENIED
                                       or owner.startswith("minitape.grading")):
            self.refuse(f"'.{name}' comes from the module {owner}, which an answer may not use")
        return value

    def read(self, obj, name):
        if name.startswith("_") or name in FRAME_ATTRIBUTES:
            self.refuse(f"'.{name}' is not available to an answer")
        if name in ("format", "format_map") and (obj is str or type(obj) is str):
            return self._formatter(obj, name)
        return self.allowed(getattr(obj, name), name)

    def write(self, obj, name, value):
        if name.startswith("_"):
            self.refuse(f"'.{name}' is not available to an answer")
        if isinstance(obj, (type, types.ModuleType)):
            self.refuse(f"an answer may not change the attribute '{name}' of "
                        f"{getattr(obj, '__name__', 'a module')}: leave classes and modules "
                        "as they are")
        if type(obj) not in self.classes:
            self.refuse(f"an answer may set attributes only on objects of classes it (or the "
                        f"notebook) defines, not on a {type(obj).__name__} ('.{name}')")
        setattr(obj, name, value)

    def _formatter(self, obj, name):
        """str.format and str.format_map, minus the '{0.attr}' and '{0[key]}'
        fields that read attributes on the answer's behalf."""
        import string
        parse = string.Formatter().parse

        def safe(template, *args, **kwargs):
            if type(template) is not str:
                self.refuse("str.format needs a str")
            for _, field, _, _ in parse(template):
                if field and ("." in field or "[" in field):
                    self.refuse(f"a format field '{{{field}}}' reads attributes or items: "
                                "write an f-string")
            return getattr(str, name)(template, *args, **kwargs)
        return (lambda *a, **k: safe(obj, *a, **k)) if type(obj) is str else safe

    def import_(self, name, globals=None, locals=None, fromlist=(), level=0):
        if level or name not in IMPORTS:
            self.refuse(f"an answer may import only {', '.join(IMPORTS)}, not {name}")
        module = importlib.import_module(name)
        for item in fromlist or ():
            if item == "*" or item.startswith("_"):
                self.refuse(f"'from {name} import {item}' is not available to an answer")
            self.allowed(getattr(module, item), item)
        return module if fromlist else sys.modules[name.split(".")[0]]

    def build_class(self, func, name, *bases, **kwargs):
        if kwargs:
            self.refuse("a class statement may not pass keywords")
        cls = builtins.__build_class__(func, name, *bases)
        self.classes.add(cls)
        return cls

    def builtins_for(self):
        """The builtins dict answer code runs with."""
        names = {name: getattr(builtins, name) for name in _SAFE_BUILTINS}
        names.update({name: value for name, value in vars(builtins).items()
                      if isinstance(value, type) and issubclass(value, BaseException)})
        names.update(_read=self.read, _write=self.write, __import__=self.import_,
                     __build_class__=self.build_class, __name__="builtins")
        return names
