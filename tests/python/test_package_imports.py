"""The Python package's imports point one way: no circle among its modules, and no import of one
of its own modules inside a function (the way a circle is usually hidden). Read from the source
with ast, so the test needs neither PyTorch nor the library."""
import ast
import os
import unittest

PACKAGE_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "cinn_like", "python",
                           "cinn_like")


def package_modules(root=PACKAGE_DIR, name="cinn_like"):
    """{dotted module name: path} of every .py file of the package (a package's __init__.py is
    the package's own name)."""
    modules = {}
    for dirpath, _, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        prefix = name if rel == "." else name + "." + rel.replace(os.sep, ".")
        for f in files:
            if f.endswith(".py"):
                modules[prefix if f == "__init__.py" else f"{prefix}.{f[:-3]}"] = \
                    os.path.join(dirpath, f)
    return modules


def imports_of(module, path, modules):
    """[(imported package module, line, inside a function)] of `module`'s source: relative and
    absolute imports of the package's modules, `from X import name` counted as X.name where
    that is a module of the package, else as X."""
    is_package = path.endswith("__init__.py")
    base = module.split(".") if is_package else module.split(".")[:-1]
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name in modules:
                        found.append((alias.name, child.lineno, in_function))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    parts = base[:len(base) - (child.level - 1)]
                    target = ".".join(parts + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                for alias in child.names:
                    sub = f"{target}.{alias.name}"
                    name = sub if sub in modules else target
                    if name in modules:
                        found.append((name, child.lineno, in_function))
            visit(child, nested)

    visit(tree, False)
    return found


def cycles(graph):
    """The strongly connected components of `graph` ({node: set of nodes}) with more than one
    node or a node importing itself (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]

    def strongconnect(v):
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == node:
                            break
                    if len(component) > 1 or node in graph.get(node, ()):
                        out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return out


class PackageImportsTest(unittest.TestCase):
    def setUp(self):
        self.modules = package_modules()
        self.imports = {m: imports_of(m, p, self.modules) for m, p in self.modules.items()}

    def test_the_reader_sees_the_package(self):
        # The walk finds the torch backend's layers and their imports (a broken walk would
        # pass the other tests vacuously).
        for m in ("cinn_like", "cinn_like.torch.kernel", "cinn_like.torch.registry",
                  "cinn_like.torch.sizes", "cinn_like.torch.ops.nn"):
            self.assertIn(m, self.modules)
        kernel = {name for name, _, _ in self.imports["cinn_like.torch.kernel"]}
        self.assertIn("cinn_like.torch.registry", kernel)
        self.assertIn("cinn_like._lib", kernel)
        self.assertIn("cinn_like.torch.ops", kernel)

    def test_no_circle(self):
        graph = {m: {name for name, _, _ in found if name != m}
                 for m, found in self.imports.items()}
        self.assertEqual(cycles(graph), [], "modules that import each other, directly or not")

    def test_no_package_import_inside_a_function(self):
        nested = [f"{m} line {line}: {name}" for m, found in self.imports.items()
                  for name, line, in_function in found if in_function]
        self.assertEqual(nested, [], "imports of the package's own modules inside functions")

    def test_the_circle_finder_finds_circles(self):
        self.assertEqual(cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}),
                         [["a", "b", "c"]])
        self.assertEqual(cycles({"a": {"a"}}), [["a"]])
        self.assertEqual(cycles({"a": {"b"}, "b": set()}), [])


if __name__ == "__main__":
    unittest.main()
