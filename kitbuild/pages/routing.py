"""The steps of a template that jinja2 takes without asking its environment, made to ask it.

:class:`kitbuild.pages.sandbox._BoundedEnvironment` keeps its limits in the hooks jinja2 calls (a
call, an operator, a filter, an attribute). A loop's next item, a slice, a '~', a comparison and a
dict's key call none of them: the code generator here routes each through a method of the
environment, which measures it first.
"""

from __future__ import annotations

from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.visitor import NodeTransformer

# The tests that compare their value with another (and so walk both, when they are lists).
COMPARING_TESTS = frozenset("eq equalto == ne != lt lessthan < le <= gt greaterthan > ge >= in".split())


def _through(method: str, node: nodes.Node) -> nodes.Call:
    """``node``'s value passed through the environment's ``method``."""
    return nodes.Call(nodes.EnvironmentAttribute(method), [node], [], None, None, lineno=node.lineno)


def _compared(node: nodes.Expr) -> nodes.Expr:
    # (A constant is a short text or number, or a tuple of them, written in the template.)
    return node if isinstance(node, nodes.Const) else _through("compared", node)


class _Routed(NodeTransformer):
    """A template's steps that jinja2 takes without asking the environment, routed through it."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        # (A recursive loop's deeper levels are calls to loop(), which the environment sees.)
        self.generic_visit(node)
        node.iter = _through("loop_items", node.iter)
        return node

    def visit_Getitem(self, node: nodes.Getitem) -> nodes.Node:
        # (A key's lookup goes through the environment's getitem, which measures the key.)
        self.generic_visit(node)
        return _through("sliced", node) if isinstance(node.arg, nodes.Slice) else node

    def visit_Compare(self, node: nodes.Compare) -> nodes.Node:
        # '==', '<', 'in' walk lists and dicts to the bottom, in C.
        self.generic_visit(node)
        node.expr = _compared(node.expr)
        for operand in node.ops:
            operand.expr = _compared(operand.expr)
        return node

    def visit_Test(self, node: nodes.Test) -> nodes.Node:
        self.generic_visit(node)
        if node.name in COMPARING_TESTS:
            node.node = _compared(node.node)
            node.args = [_compared(arg) for arg in node.args]
        return node

    def visit_Pair(self, node: nodes.Pair) -> nodes.Node:
        # A dict's key is hashed, and a tuple's hash walks it.
        self.generic_visit(node)
        node.key = _compared(node.key)
        return node


class _BoundedCodeGenerator(CodeGenerator):
    """jinja2's code for a template, with the steps that call nothing made to go through the
    environment: a loop takes its items through :meth:`_BoundedEnvironment.loop_items`, a slice
    is counted by :meth:`_BoundedEnvironment.sliced`, a comparison's values and a dict's keys are
    measured by :meth:`_BoundedEnvironment.compared`, and a '~' joins through
    :meth:`_BoundedEnvironment.join`."""

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        _Routed().visit(node)
        super().visit_Template(node, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        # The join jinja2 itself would choose (markup_join where the frame escapes, or, where that
        # is only known at run time, where jinja2 decides it then), named to the environment.
        markup = "context.eval_ctx.volatile" if frame.eval_ctx.volatile else repr(bool(frame.eval_ctx.autoescape))
        self.write(f"environment.join({markup}, (")
        for piece in node.nodes:
            self.visit(piece, frame)
            self.write(", ")
        self.write("))")
