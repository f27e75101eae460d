"""The C core's layering, checked from the source text (no compiler needed).

csrc/ has one folder a layer, bottom to top: base < kernels < plan < walk < call < py
(call/: how a checked call runs, with no Python object; py/: the binding).
A file may include its own layer's headers and those of the layers below, never
above (py/ only its own, base/'s and call/'s: it reaches the plan, the walk and
the kernels through the call layer, which builds the plans; a plan's fields are
read in plan/ and walk/ only; call/ names no Python API), and no two C files
may depend on each other, even through others: file A depends on file B if A
uses a non-static function or variable that B defines.
Besides: no .c file over 500 lines (one job a file), and every .c/.h starts with
the comment that says its job.  A call's strategy is decided in one place: only
call/choose.c reads the thresholds of call/cost.h that choose one, and py/ names no
strategy (it hands the call to so_call_execute), and applies no index rule: the
call layer reads the index values (mode='s transform, the Dask routing, at_apply's
offsets), the binding hands it the arrays.
"""
import os
import re

import pytest

CSRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "csrc")
LAYERS = ["base", "kernels", "plan", "walk", "call", "py"]
MAX_LINES = 500


def c_files(ext=(".c", ".h")):
    out = []
    for root, _, files in os.walk(CSRC):
        for f in sorted(files):
            if f.endswith(ext):
                out.append(os.path.relpath(os.path.join(root, f), CSRC).replace(os.sep, "/"))
    return sorted(out)


def read(rel):
    with open(os.path.join(CSRC, rel), encoding="utf-8") as f:
        return f.read()


def layer_of(rel):
    return rel.split("/")[0] if "/" in rel else None


def strip_comments_and_strings(text):
    """The text with comments, string and character literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def drop_preprocessor(code):
    """Blank preprocessor lines (with their continuations)."""
    lines, out, cont = code.split("\n"), [], False
    for line in lines:
        if cont or line.lstrip().startswith("#"):
            cont = line.rstrip().endswith("\\")
            out.append("")
        else:
            out.append(line)
    return "\n".join(out)


def remove_attributes(text):
    """Drop __attribute__((...)) (balanced parentheses)."""
    while True:
        m = re.search(r"__attribute__\s*\(", text)
        if not m:
            return text
        depth, j = 0, m.end() - 1
        while j < len(text):
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        text = text[:m.start()] + " " + text[j + 1:]


IDENT = re.compile(r"[A-Za-z_]\w*")


def variable_name(decl):
    """The name a top-level declaration (up to its ";") defines, or None."""
    head = decl.split("{")[0]
    if "=" in head:
        part = head.split("=")[0]
    elif "}" in decl:
        part = decl[decl.rindex("}") + 1:]          # struct {...} name; or enum {...};
    else:
        part = decl
    names = IDENT.findall(re.sub(r"\[[^\]]*\]", " ", part))
    return names[-1] if names else None


MACRO_CALL = re.compile(r"^[A-Z_][A-Z0-9_]*\s*\(", re.M)


def blank_macro_calls(code):
    """Blank top-level calls of code-generating macros (MEAN_LOOP(...) on a line
    of its own): they end with no ";" and would run into the next definition."""
    out, pos = [], 0
    for m in MACRO_CALL.finditer(code):
        if m.start() < pos:
            continue
        depth, j = 0, m.end() - 1
        while j < len(code):
            depth += {"(": 1, ")": -1}.get(code[j], 0)
            if depth == 0:
                break
            j += 1
        out.append(code[pos:m.start()])
        out.append(re.sub(r"[^\n]", " ", code[m.start():j + 1]) + ";")
        pos = j + 1
    out.append(code[pos:])
    return "".join(out)


def definitions(code):
    """Top-level non-static functions and variables defined in code (comments,
    strings and preprocessor lines already blanked)."""
    code = blank_macro_calls(code)
    defs = set()
    depth, start, in_function = 0, 0, False
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                decl = remove_attributes(code[start:i])
                in_function = "(" in decl and "=" not in decl
                words = set(IDENT.findall(decl))
                if in_function and not {"static", "typedef"} & words:
                    # a function definition: its name is the last identifier before "("
                    names = IDENT.findall(decl.split("(")[0])
                    if names:
                        defs.add(names[-1])
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and in_function:
                start, in_function = i + 1, False
        elif c == ";" and depth == 0:
            decl = remove_attributes(code[start:i])
            words = set(IDENT.findall(decl))
            if words and not {"static", "typedef", "extern"} & words and "(" not in decl.split("{")[0]:
                name = variable_name(decl)
                if name:
                    defs.add(name)                  # a variable
            start = i + 1
    return defs


def dependency_graph():
    sources = [f for f in c_files((".c",))]
    code = {f: strip_comments_and_strings(read(f)) for f in sources}
    defined = {f: definitions(drop_preprocessor(code[f])) for f in sources}
    owner = {}
    for f, names in defined.items():
        for name in names:
            assert name not in owner, f"{name} is defined non-static in both {owner[name]} and {f}"
            owner[name] = f
    graph = {}
    for f in sources:
        used = set(IDENT.findall(code[f]))
        graph[f] = {owner[n] for n in used if n in owner and owner[n] != f}
    return graph, defined


def find_cycle(graph):
    """A cycle as a list of files (first == last), or None."""
    state, stack = {}, []

    def visit(v):
        state[v] = 1
        stack.append(v)
        for w in sorted(graph[v]):
            if state.get(w) == 1:
                return stack[stack.index(w):] + [w]
            if w not in state:
                found = visit(w)
                if found:
                    return found
        stack.pop()
        state[v] = 2
        return None

    for v in sorted(graph):
        if v not in state:
            found = visit(v)
            if found:
                return found
    return None


def test_every_file_is_in_a_layer():
    stray = [f for f in c_files() if layer_of(f) not in LAYERS]
    assert not stray, f"C files outside the layer folders {LAYERS}: {stray}"


def test_includes_never_reach_up():
    bad = []
    for f in c_files():
        own = LAYERS.index(layer_of(f)) if layer_of(f) in LAYERS else -1
        for m in re.finditer(r'^\s*#\s*include\s*"([^"]+)"', read(f), re.M):
            target = m.group(1)
            folder = target.split("/")[0] if "/" in target else None
            if folder not in LAYERS:
                bad.append(f'{f}: #include "{target}" is not written as "<layer>/<file>"')
            elif LAYERS.index(folder) > own:
                bad.append(f'{f} (layer {layer_of(f)}): #include "{target}" reaches up to layer {folder}')
    assert not bad, "\n".join(bad)


def test_no_dependency_cycle_between_c_files():
    graph, defined = dependency_graph()
    # the parser must see the definitions it is about, or the test proves nothing
    everything = set().union(*defined.values())
    for name in ("so_run_tasks", "so_cpu_has", "so_make_plan", "so_run", "so_args_parse", "PyInit__core",
                 "so_func_names"):
        assert name in everything, f"the parser missed the definition of {name}"
    cycle = find_cycle(graph)
    assert cycle is None, "dependency cycle between C files: " + " -> ".join(cycle)


def test_binding_includes_only_base_and_call():
    bad = [f'{f}: #include "{m.group(1)}/{m.group(2)}"' for f in c_files() if layer_of(f) == "py"
           for m in re.finditer(r'^\s*#\s*include\s*"([^"/]+)/([^"]+)"', read(f), re.M)
           if m.group(1) not in ("py", "base", "call")]
    assert not bad, "py/ includes base/ and call/ headers only:\n" + "\n".join(bad)


def test_only_the_call_layer_and_below_touch_plans():
    bad = [f for f in c_files() if layer_of(f) not in ("plan", "walk", "call")
           and re.search(r"\bso_(plan|make_plan)\b", strip_comments_and_strings(read(f)))]
    assert not bad, f"a plan is built and read in plan/, walk/ and call/ only: {bad}"


PLAN_FIELD = re.compile(r"\b(p|plan|cplan)(\.|->)(gnd|bnd|k|win|nwin|out_overlaps|ixtype|istep|"
                        r"isize|gshape|bshape|gs_\w+|bs_\w+|is_\w+)\b")


def test_no_plan_field_is_read_above_the_walk():
    # the call layer asks plan/ and walk/ about a plan (so_plan_one_index_run, so_split_runs),
    # it does not read the geometry itself
    bad = [f"{f}: {m.group(0)}" for f in c_files() if layer_of(f) in ("call", "py")
           for m in PLAN_FIELD.finditer(strip_comments_and_strings(read(f)))]
    assert not bad, "a plan's fields are read in plan/ and walk/ only:\n" + "\n".join(bad)


def test_call_layer_makes_no_python_call():
    # the call layer sees so_array and so_call, never a Python object: what needs
    # Python it asks of the binding (call/call.h's so_host)
    bad = [f"{f}: {m.group(0)}" for f in c_files() if layer_of(f) == "call"
           for m in re.finditer(r"\b_?Py\w*", strip_comments_and_strings(read(f)))]
    assert not bad, "call/ names a Python API:\n" + "\n".join(bad)


def test_dependencies_follow_the_layers():
    graph, _ = dependency_graph()
    bad = [f"{a} uses {b}" for a, deps in graph.items() for b in deps
           if LAYERS.index(layer_of(b)) > LAYERS.index(layer_of(a))]
    assert not bad, "a file uses a function of a layer above it:\n" + "\n".join(sorted(bad))


def test_numpy_api_table_is_defined_in_base():
    # PY_ARRAY_UNIQUE_SYMBOL: the file that defines SCATTEROPS_MODULE defines the
    # table every NumPy call goes through (macros, invisible to the parse above)
    definers = [f for f in c_files() if re.search(r"^\s*#\s*define\s+SCATTEROPS_MODULE\b",
                                                   read(f), re.M)]
    assert definers == ["base/numpy_api.c"], definers


def test_thread_count_is_read_only_in_py():
    bad = [f for f in c_files() if layer_of(f) != "py"
           and re.search(r"\bso_(get_)?num_threads\b", strip_comments_and_strings(read(f)))]
    assert not bad, f"below py/, the thread count must be a parameter: {bad}"


@pytest.mark.parametrize("rel", c_files((".c",)))
def test_c_file_size(rel):
    n = read(rel).count("\n")
    assert n <= MAX_LINES, f"{rel} has {n} lines (at most {MAX_LINES}: one job a file)"


@pytest.mark.parametrize("rel", c_files())
def test_file_starts_with_a_comment(rel):
    text = read(rel).lstrip()
    assert text.startswith(("/*", "//")), f"{rel} does not start with the comment saying its job"


# The strategies the call layer runs: named in call/ only, where execute.c runs the one
# choose.c picked; the binding hands a call over with so_call_execute.
STRATEGY_FUNCTIONS = ("so_call_direct", "so_call_fresh_checked", "so_call_fresh_fused",
                      "so_call_apply", "so_run_partials")
# The thresholds of call/cost.h that choose a strategy, and the predicates that weigh one:
# named in choose.c only.  (SO_GIL_RELEASE_MIN, when a phase releases the lock, is read by
# every file that runs a long phase; the walk's split reads its numbers from
# so_walk_cost_model, passed down; the fold's thresholds are read by the fold.)
CHOICE_THRESHOLDS = ("SO_ONE_PASS_MIN", "so_scratch_pays", "SO_PARTIAL_MIN_SHARE",
                     "SO_PARTIAL_MIN_RATIO", "SO_ROWS_ONE_THREAD_BYTES", "SO_FUSED_MIN_BYTES",
                     "SO_OVERLAP_MIN", "SO_SIDE_CHECK_MIN", "so_mean_out_small",
                     "so_direct_form_pays", "so_direct_form_backs_off", "so_split_runs",
                     "so_owned_split_runs", "so_owned_split_applies")


def _files_naming(names, layers=None):
    found = {}
    for f in c_files():
        if layers is not None and layer_of(f) not in layers:
            continue
        code = strip_comments_and_strings(read(f))
        hit = sorted(n for n in names if re.search(rf"\b{n}\b", code))
        if hit:
            found[f] = hit
    return found


def test_the_binding_runs_no_strategy():
    found = _files_naming(STRATEGY_FUNCTIONS, layers=("py",))
    assert not found, f"py/ hands a call to so_call_execute, it runs no strategy itself: {found}"


def test_one_file_decides_the_strategy():
    found = _files_naming(CHOICE_THRESHOLDS)
    # cost.h defines them, cost.c and walk/ (the split) implement the predicates
    found = {f: n for f, n in found.items()
             if f not in ("call/cost.h", "call/cost.c", "call/choose.c") and layer_of(f) != "walk"}
    assert not found, f"only call/choose.c reads the thresholds that choose a strategy: {found}"
    assert set(_files_naming(CHOICE_THRESHOLDS)["call/choose.c"]) >= set(CHOICE_THRESHOLDS) - {
        "SO_ONE_PASS_MIN"}, "choose.c reads every threshold that chooses a strategy"


# The index rules: what places an index value on its axis (in range, wrapped from the end,
# mapped by mode=) and the counter that walks an index array's positions.  py/ converts
# arrays and hands them to the call layer, which reads their values by these rules
# (call/mode_transform.c, call/route_blocks.c, call/at_index_arrays.c, call/execute.c).
INDEX_RULES = ("so_mode_position", "so_index_inside", "so_index_inside_unsigned", "so_wrap",
               "so_clamp", "so_first_bad_run", "so_load_intp", "so_nd_init", "so_nd_next")
# py/ files that still read index values themselves: _core.at's index reader (the first bad
# value of an index array for NumPy's message, the flat offsets of element tuples).
BINDING_READS_INDEX_VALUES = {"py/at_index.c"}


def test_the_binding_reads_no_index_value():
    found = {f: n for f, n in _files_naming(INDEX_RULES, layers=("py",)).items()
             if f not in BINDING_READS_INDEX_VALUES}
    assert not found, f"py/ hands index values to the call layer, it applies no index rule: {found}"


def test_the_mode_rule_is_defined_in_the_call_layer():
    defining = [f for f in c_files() if re.search(r"\bso_mode_position\s*\([^;{]*\)\s*\{",
                                                  strip_comments_and_strings(read(f)))]
    assert defining == ["call/call.h"], defining
