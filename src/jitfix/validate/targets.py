"""What to validate in a module: the functions a rewrite changed, and how to call them.

Runs in jitfix's own process, from the source alone (nothing is imported or executed here).
For each top-level function whose code differs between the original and the rewrite it
works out how the user calls it (a jitted entry point as it is; a helper that only runs
inside jit wrapped in ``jax.jit`` with its static parameters), what its parameters look
like (annotations, defaults, which are traced, which count things), the constants its
conditions and loop bounds compare with, the module globals it reads that the module
changes, and the branches and loop bodies of the rewritten code, for coverage.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass, field
from pathlib import Path

from jitfix.analysis.catalogue import SHAPE_PARAMETERS, is_array_annotation, is_range
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.blocks import FunctionNode
from jitfix.analysis.catalogue import JIT_TRANSFORMS
from jitfix.analysis.traced import find_traced_functions
from jitfix.analysis.masks import MaskParameters, module_masks
from jitfix.analysis.traced_function import TracedFunction, TracedFunctions
from jitfix.analysis.values import compared_with_text, named_parameters, parameter_names, positional_parameters
from jitfix.config import Settings

# The rules whose rewrites have branches or loop bodies worth covering.
BRANCH_RULES = ("JF101",)
LOOP_RULES = ("JF201", "JF202", "JF203")
# Where a call's arguments are shapes or trip counts (a parameter used there counts things),
# by the called name alone (the module that defines it is not looked up): the shape
# parameters of the JAX catalogue, and `range` and the array methods that take shapes.
COUNTING_POSITIONS: dict[str, set[int]] = {"range": {0, 1, 2}, "reshape": {0, 1, 2, 3}, "broadcast_to": {0, 1}}
for _name, _shape_parameters in SHAPE_PARAMETERS.items():
    COUNTING_POSITIONS.setdefault(_name.rpartition(".")[2], set()).update(
        index for index, _ in _shape_parameters if index is not None)
COUNTING_KEYWORDS = frozenset({"axis", "repeats", "k"} | {keyword for parameters in SHAPE_PARAMETERS.values()
                                                          for _, keyword in parameters})
JAXTYPING_DTYPES = {"Int": "int", "Integer": "int", "UInt": "int", "Bool": "bool", "Shaped": "float"}
MAX_CONSTANTS = 8


@dataclass
class Parameter:
    name: str
    kind: str  # "positional", "keyword" (keyword-only) or "var" (*args / **kwargs)
    annotation: str | None = None  # "array", "int", "float", "bool"
    dtype: str | None = None  # of an annotated array: "float", "int", "bool"
    shape: list[int] | None = None  # from a jaxtyping annotation, named dimensions as 3
    has_default: bool = False
    traced: bool = False
    counts: bool = False  # used as a trip count or a size
    min_ndim: int = 0  # indexed (x[i]), measured (len(x), x.shape[0]): scalars do not fit
    integer: bool = False  # used with bitwise operators
    texts: list[str] = field(default_factory=list)  # the strings it is compared with (`mode == "sum"`)
    keys: list[str] = field(default_factory=list)  # the only items it is indexed by (`state["count"]`): a dict


@dataclass
class Target:
    name: str
    line: int
    mode: str  # "as_is": call the module's function; "wrap": jax.jit it (a helper traced by its callers)
    # The module-level name the function is called through when an assignment jits it
    # (`fast = jax.jit(scaled)`): that name is called, as is, in both modules.
    entry: str | None = None
    parameters: list[Parameter] = field(default_factory=list)
    before_static: list[str] = field(default_factory=list)
    after_static: list[str] = field(default_factory=list)
    constants: list[float] = field(default_factory=list)
    globals: list[str] = field(default_factory=list)  # module globals it reads that the module changes
    # Globals the rewrite made keyword parameters (JF301): each call passes their current value.
    passed_globals: list[str] = field(default_factory=list)
    compare_stdout: bool = False  # its prints were rewritten
    sites: list[dict] = field(default_factory=list)  # branches and loops, for coverage
    spans: dict[int, int] = field(default_factory=dict)  # statement first line -> last line, watched
    skip: str | None = None

    def to_json(self) -> dict:
        return asdict(self)


def _top_level_functions(tree: ast.Module) -> dict[str, FunctionNode]:
    """Module-level defs by name, and methods as ``Class.method``."""
    found: dict[str, FunctionNode] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found[f"{node.name}.{item.name}"] = item
    return found


def changed_functions(old_tree: ast.Module, new_tree: ast.Module) -> list[tuple[str, FunctionNode, FunctionNode | None]]:
    """(name, old def, new def or None) for every function whose code the rewrite changed."""
    old_defs, new_defs = _top_level_functions(old_tree), _top_level_functions(new_tree)
    changed = []
    for name, old in old_defs.items():
        new = new_defs.get(name)
        if new is None or ast.dump(old) != ast.dump(new):
            changed.append((name, old, new))
    return changed


def _annotation(node: ast.AST | None, imports: ImportTable) -> tuple[str | None, str | None, list[int] | None]:
    """(kind, array dtype, array shape) from an annotation such as ``Float[Array, "n 3"]``."""
    if node is None:
        return None, None, None
    if isinstance(node, ast.Name) and node.id in ("int", "float", "bool"):
        return node.id, None, None
    if isinstance(node, ast.Subscript):
        base = imports.resolve(node.value) or ""
        if base.startswith("jaxtyping."):
            dtype = JAXTYPING_DTYPES.get(base.rpartition(".")[2], "float")
            shape = None
            if isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 2:
                dims = node.slice.elts[1]
                if isinstance(dims, ast.Constant) and isinstance(dims.value, str):
                    shape = _jaxtyping_shape(dims.value)
            return "array", dtype, shape
        return None, None, None
    resolved = imports.resolve(node) or ""
    if is_array_annotation(resolved):
        return "array", "float", None
    return None, None, None


def _jaxtyping_shape(dims: str) -> list[int] | None:
    """``"n 3"`` -> [3, 3]; variadic dimensions (``...``, ``*batch``) give no shape."""
    shape = []
    for dim in dims.split():
        if dim.startswith(("*", "...")) or dim == "#":
            return None
        shape.append(int(dim) if dim.isdigit() else 3)
    return shape


def _counting_names(function: FunctionNode) -> set[str]:
    """Names used as a trip count, a size, an axis or a slice bound: ``range(n)``,
    ``jnp.zeros((n, 3))``, ``linspace(0, 1, num=k)``, ``x.sum(axis=a)``, ``x[:k]``."""
    counted: list[ast.AST] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            counted += [argument for index, argument in enumerate(node.args)
                        if index in COUNTING_POSITIONS.get(callee or "", ())]
            counted += [keyword.value for keyword in node.keywords if keyword.arg in COUNTING_KEYWORDS]
        elif isinstance(node, ast.Slice):
            counted += [part for part in (node.lower, node.upper, node.step) if part is not None]
        elif isinstance(node, ast.Subscript):  # x[i], x.at[i, j]: integer indices
            index = node.slice
            counted += [part for part in (index.elts if isinstance(index, ast.Tuple) else [index])
                        if isinstance(part, ast.Name)]
    names = {n.id for part in counted for n in ast.walk(part) if isinstance(n, ast.Name)}
    # A local that counts counts what it is made of (`pad = length - x.shape[0]`).
    bindings = [(node.targets[0].id, node.value) for node in ast.walk(function) if isinstance(node, ast.Assign)
                and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)]
    grown = True
    while grown:
        before = len(names)
        names |= {n.id for name, value in bindings if name in names for n in ast.walk(value) if isinstance(n, ast.Name)}
        grown = len(names) > before
    return names


def _array_uses(function: FunctionNode) -> tuple[dict[str, int], set[str]]:
    """(least number of dimensions each name needs, names used with bitwise operators)."""
    ndim: dict[str, int] = {}
    integer: set[str] = set()

    def need(node: ast.AST, dims: int) -> None:
        if isinstance(node, ast.Name):
            ndim[node.id] = max(ndim.get(node.id, 0), dims)

    for node in ast.walk(function):
        if isinstance(node, ast.Subscript):
            index = node.slice
            if isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
                    and isinstance(index, ast.Constant) and isinstance(index.value, int):
                need(node.value.value, index.value + 1 if index.value >= 0 else -index.value)
            else:  # `x[i, j]`, and `x.at[i]` (an update of `x`'s elements) alike
                indexed = node.value.value if isinstance(node.value, ast.Attribute) and node.value.attr == "at" \
                    else node.value
                need(indexed, len(index.elts) if isinstance(index, ast.Tuple) else 1)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "len" and node.args:
            need(node.args[0], 1)
        elif isinstance(node, ast.BinOp | ast.AugAssign) and isinstance(
                node.op, ast.BitAnd | ast.BitOr | ast.BitXor | ast.LShift | ast.RShift):
            for side in (getattr(node, "left", None), getattr(node, "right", None), getattr(node, "target", None)):
                if isinstance(side, ast.Name):
                    integer.add(side.id)
    return ndim, _sources_of(function, integer)


def _sources_of(function: FunctionNode, names: set[str]) -> set[str]:
    """``names`` and the names they are computed from (``m = n + 0``: ``n`` too)."""
    assignments = [node for node in ast.walk(function)
                   if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)]
    found = set(names)
    while True:
        more = {n.id for node in assignments if getattr(node.targets[0], "id", None) in found
                for n in ast.walk(node.value) if isinstance(n, ast.Name)} - found
        if not more:
            return found
        found |= more


def _constants(function: FunctionNode) -> list[float]:
    """Numbers the function's comparisons and loop bounds use: inputs near them take both ways."""
    found: list[float] = []
    for node in ast.walk(function):
        parts: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
        elif is_range(node):
            parts = list(node.args)
        for part in parts:
            if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub):
                part = part.operand
                sign = -1
            else:
                sign = 1
            if isinstance(part, ast.Constant) and isinstance(part.value, int | float) \
                    and not isinstance(part.value, bool) and abs(part.value) <= 1e6:
                value = sign * part.value
                if value not in found:
                    found.append(value)
    return found[:MAX_CONSTANTS]


def _parameters(function: FunctionNode, traced: TracedFunction | None, imports: ImportTable,
                masks: frozenset[str] = frozenset()) -> list[Parameter]:
    """What validation needs of each parameter to make inputs; ``masks``: those every call of
    the module gives a boolean mask (`MaskParameters`), given boolean arrays."""
    arguments = function.args
    counting = _counting_names(function)
    ndims, integers = _array_uses(function)
    texts = _compared_texts(function)
    keys = _string_keys(function)
    positional = positional_parameters(function)
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    listed = [(arg, "positional", default) for arg, default in zip(positional, defaults)]
    listed += [(arg, "keyword", default) for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults)]
    listed += [(arg, "var", None) for arg in (arguments.vararg, arguments.kwarg) if arg is not None]
    parameters = []
    for arg, kind, default in listed:
        annotation, dtype, shape = _annotation(arg.annotation, imports)
        if arg.arg in masks and dtype is None:
            dtype = "bool"
        is_traced = traced is not None and arg.arg in traced.traced_params
        parameters.append(Parameter(
            name=arg.arg, kind=kind, annotation=annotation, dtype=dtype, shape=shape,
            has_default=default is not None, traced=is_traced,
            counts=(arg.arg in counting or annotation == "int") and arg.arg not in masks,
            min_ndim=ndims.get(arg.arg, 0), integer=arg.arg in integers and arg.arg not in masks,
            texts=texts.get(arg.arg, []),
            keys=keys.get(arg.arg, [])))
    return parameters


def _string_keys(function: FunctionNode) -> dict[str, list[str]]:
    """The string keys each name is indexed by, for names indexed only so (`state["count"]`,
    read or written): a parameter indexed so is given dicts of those keys."""
    found: dict[str, list[str]] = {}
    other: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                known = found.setdefault(node.value.id, [])
                known += [node.slice.value] if node.slice.value not in known else []
            else:
                other.add(node.value.id)
    return {name: keys for name, keys in found.items() if name not in other}


def _compared_texts(function: FunctionNode) -> dict[str, list[str]]:
    """The strings each name is compared with (``mode == "sum"``, ``mode in ("a", "b")``):
    a parameter compared with strings is given strings."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(function):
        operand = compared_with_text(node) if isinstance(node, ast.Compare) else None
        if isinstance(operand, ast.Name):
            literals = [part.value for part in (node.left, *node.comparators)  # type: ignore[attr-defined]
                        for part in (part.elts if isinstance(part, ast.Tuple | ast.List | ast.Set) else [part])
                        if isinstance(part, ast.Constant) and isinstance(part.value, str)]
            known = found.setdefault(operand.id, [])
            known += [literal for literal in literals if literal not in known]
    return found


def _static_names(function: FunctionNode, traced: TracedFunction | None) -> list[str]:
    if traced is None:
        return []
    names = [arg.arg for arg in named_parameters(function)]
    return [name for name in names if name not in traced.traced_params]


def _first_statement(body: list[ast.stmt]) -> ast.stmt:
    """The first statement that runs code (a docstring-like constant emits no line event)."""
    for statement in body:
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)):
            return statement
    return body[0]


def _span(statement: ast.stmt) -> tuple[int, int]:
    return statement.lineno, statement.end_lineno or statement.lineno


def _header_span(statement: ast.If | ast.For | ast.While) -> tuple[int, int]:
    head = statement.test if isinstance(statement, ast.If | ast.While) else statement.iter
    return statement.lineno, head.end_lineno or statement.lineno


def _if_site(node: ast.If) -> dict:
    """The arms of an if/elif/else chain: each body is entered, or the test is passed by."""
    arms = []
    current = node
    while True:
        test = _header_span(current)
        body = _span(_first_statement(current.body))
        word = "if" if current is node else "elif"
        arms.append({"label": f"line {current.lineno} {word} true", "enter": body})
        orelse = current.orelse
        if len(orelse) == 1 and isinstance(orelse[0], ast.If) and orelse[0].lineno != current.lineno:
            current = orelse[0]
            continue
        if orelse:
            arms.append({"label": f"line {current.lineno} {word} false", "enter": _span(_first_statement(orelse))})
        else:
            arms.append({"label": f"line {current.lineno} {word} false", "pass": test, "body": body})
        return {"kind": "if", "line": node.lineno, "arms": arms}


def _loop_site(node: ast.For | ast.While) -> dict:
    return {"kind": "loop", "line": node.lineno, "header": _header_span(node),
            "body": _span(_first_statement(node.body))}


def _sites(function: FunctionNode, lines: dict[int, str]) -> list[dict]:
    sites = []
    for node in ast.walk(function):
        code = lines.get(getattr(node, "lineno", -1))
        if code in BRANCH_RULES and isinstance(node, ast.If):
            sites.append(_if_site(node))
        elif code in LOOP_RULES and isinstance(node, ast.For | ast.While):
            sites.append(_loop_site(node))
    return sites


def _watched_spans(sites: list[dict]) -> dict[int, int]:
    spans: dict[int, int] = {}
    for site in sites:
        pairs = [site["header"], site["body"]] if site["kind"] == "loop" else [
            span for arm in site["arms"] for span in (arm.get("enter"), arm.get("pass"), arm.get("body")) if span]
        for start, end in pairs:
            spans[start] = end
    return spans


def _decorators(function: FunctionNode, imports: ImportTable) -> tuple[bool, str | None]:
    """(jit-decorated, the first decorator that is not jit) of a def."""
    jitted, other = False, None
    for decorator in function.decorator_list:
        expr = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = imports.resolve(expr) or ""
        if name in JIT_TRANSFORMS or (name == "functools.partial" and isinstance(decorator, ast.Call)
                                      and decorator.args and imports.resolve(decorator.args[0]) in JIT_TRANSFORMS):
            jitted = True
        elif other is None:
            other = ast.unparse(decorator)
    return jitted, other


def _reads(function: FunctionNode) -> set[str]:
    return {node.id for node in ast.walk(function) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


def _print_calls(function: FunctionNode | None) -> list[str]:
    if function is None:
        return []
    return sorted(ast.dump(node) for node in ast.walk(function)
                  if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print")


def plan_targets(old_text: str, new_text: str, finding_lines: dict[int, str], settings: Settings | None = None,
                 path: str = "<module>") -> list[Target]:
    """A target for every function the rewrite changed. ``finding_lines`` maps a line of the
    original to the code of the rule that rewrote it (branch and loop sites for coverage)."""
    old_tree, new_tree = ast.parse(old_text), ast.parse(new_text)
    old_imports, new_imports = ImportTable(old_tree), ImportTable(new_tree)
    old_traced = find_traced_functions(old_tree, old_imports, old_text)
    new_traced = find_traced_functions(new_tree, new_imports, new_text)
    old_by_node = {node: entry for node, entry in old_traced.items()}
    new_by_name = {entry.qualname: entry for entry in new_traced.values()}
    module_names = _module_level_names(old_tree)
    masks = _mask_parameters(old_traced, old_imports)
    from jitfix.analysis.stale_globals import changing_globals
    targets = []
    for name, old, new in changed_functions(old_tree, new_tree):
        target = Target(name=name, line=old.lineno, mode="as_is")
        targets.append(target)
        if new is None:
            target.skip = f"the rewrite has no function `{name}`"
            continue
        if "." in name:
            target.skip = "a method: validation calls module-level functions (give examples of a wrapper function)"
            continue
        jitted, other = _decorators(old, old_imports)
        if other is not None:
            target.skip = f"decorated with `@{other}`: validation calls plain and jit-compiled functions only"
            continue
        old_entry = old_by_node.get(old)
        target.entry = None if jitted else _assigned_jit(old_tree, old_entry)
        target.mode = "as_is" if jitted or target.entry or old_entry is None else "wrap"
        target.parameters = _parameters(old, old_entry, old_imports, masks.of(old) if masks else frozenset())
        # Which parameters each version keeps static: the wrapper jits with them, and inputs
        # give a parameter static in either version Python values (an array is unhashable).
        new_entry = new_by_name.get(name)
        target.before_static = _static_names(old, old_entry)
        target.after_static = _static_names(new, new_entry) if new_entry else target.before_static
        target.constants = _constants(old)
        reads = _reads(old) & module_names
        target.globals = sorted(changing_globals(old_tree, reads, old_traced.changes_of(reads))) if reads else []
        added = {arg.arg for arg in new.args.kwonlyargs} - set(parameter_names(old))
        target.passed_globals = sorted(added & module_names)
        target.compare_stdout = bool(_print_calls(old)) and _print_calls(old) != _print_calls(new)
        target.sites = _sites(old, finding_lines)
        target.spans = _watched_spans(target.sites)
    return targets


def _mask_parameters(traced: TracedFunctions, imports: ImportTable) -> MaskParameters | None:
    """The module's parameters every call gives a boolean mask (a rewrite may rely on it:
    `x.mean(where=mask)`); None where nothing is traced."""
    return module_masks(traced.program.scopes, imports) if traced.program is not None else None


def _assigned_jit(tree: ast.Module, entry: TracedFunction | None) -> str | None:
    """``fast`` of the one module-level ``fast = jax.jit(scaled, ...)`` that jits the def."""
    if entry is None or len(entry.jit_sites) != 1:
        return None
    site = entry.jit_sites[0]
    if not (isinstance(site, ast.Call) and site.args and isinstance(site.args[0], ast.Name)
            and site.args[0].id == entry.node.name):
        return None
    return next((statement.targets[0].id for statement in tree.body
                 if isinstance(statement, ast.Assign) and statement.value is site and len(statement.targets) == 1
                 and isinstance(statement.targets[0], ast.Name)), None)


def _module_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        for child in ast.walk(node) if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) else ():
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                names.add(child.id)
    return names


def module_identity(path: str) -> tuple[str, str, str]:
    """(dotted module name, package, folder to put on sys.path) for a file: the package is
    found by walking up through folders that hold an ``__init__.py``."""
    file = Path(path).resolve()
    parts = [file.stem]
    folder = file.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts), ".".join(parts[:-1]), str(folder)
