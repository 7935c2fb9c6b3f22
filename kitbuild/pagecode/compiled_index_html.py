# Generated from templates/index.html.j2 by `python -m kitbuild.pagecode`; do not edit.
# mypy: ignore-errors
from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'index.html.j2'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_title = resolve('title')
    l_0_summary = resolve('summary')
    l_0_date = resolve('date')
    l_0_licence = resolve('licence')
    l_0_figures_table = resolve('figures_table')
    l_0_figure_tables = resolve('figure_tables')
    l_0_folders = resolve('folders')
    l_0_rules = resolve('rules')
    try:
        t_1 = environment.filters['short']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'short' found.")
    try:
        t_2 = environment.filters['thousands']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'thousands' found.")
    pass
    yield '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>'
    yield escape((undefined(name='title') if l_0_title is missing else l_0_title))
    yield '</title>\n<style>\nbody { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }\ntable { border-collapse: collapse; } td, th { padding: 0.2rem 0.6rem; border-bottom: 1px solid #ddd; text-align: left; }\ntd.n { text-align: right; font-variant-numeric: tabular-nums; } code { font-size: 0.95em; }\n</style>\n</head>\n<body>\n<h1>'
    yield escape((undefined(name='title') if l_0_title is missing else l_0_title))
    yield '</h1>\n'
    if (undefined(name='summary') if l_0_summary is missing else l_0_summary):
        pass
        yield '<p>'
        yield escape((undefined(name='summary') if l_0_summary is missing else l_0_summary))
        yield '</p>\n'
    yield '<p>Dated '
    yield escape((undefined(name='date') if l_0_date is missing else l_0_date))
    yield '.'
    if (undefined(name='licence') if l_0_licence is missing else l_0_licence):
        pass
        yield ' Licence: '
        yield escape((undefined(name='licence') if l_0_licence is missing else l_0_licence))
        yield '.'
    yield ' <a href="README.md">README.md</a> · <a href="index.json">index.json</a> · <a href="provenance.json">provenance.json</a> · <a href="SHA256SUMS">SHA256SUMS</a></p>\n'
    if (undefined(name='figures_table') if l_0_figures_table is missing else l_0_figures_table):
        pass
        yield '<h2>Where each figure on the page comes from</h2>\n<table>\n<tr><th>On the page</th><th>File here</th><th>Fields</th></tr>\n'
        l_1_loop = missing
        for l_1_row, l_1_loop in LoopContext((undefined(name='figures_table') if l_0_figures_table is missing else l_0_figures_table), undefined):
            _loop_vars = {}
            pass
            yield '<tr><td>'
            yield escape(environment.getattr(l_1_row, 'page'))
            yield '</td><td>'
            l_2_loop = missing
            for l_2_f, l_2_loop in LoopContext(environment.getattr(l_1_row, 'files'), undefined):
                _loop_vars = {}
                pass
                yield '<a href="'
                yield escape(l_2_f)
                yield '"><code>'
                yield escape(l_2_f)
                yield '</code></a>'
                yield escape((', ' if (not environment.getattr(l_2_loop, 'last')) else cond_expr_undefined("the inline if-expression on line 24 in 'index.html.j2' evaluated to false and no else section was defined.")))
            l_2_loop = l_2_f = missing
            yield '</td><td>'
            l_2_loop = missing
            for l_2_f, l_2_loop in LoopContext(environment.getattr(l_1_row, 'fields'), undefined):
                _loop_vars = {}
                pass
                yield '<code>'
                yield escape(l_2_f)
                yield '</code>'
                yield escape((', ' if (not environment.getattr(l_2_loop, 'last')) else cond_expr_undefined("the inline if-expression on line 24 in 'index.html.j2' evaluated to false and no else section was defined.")))
            l_2_loop = l_2_f = missing
            yield '</td></tr>\n'
        l_1_loop = l_1_row = missing
        yield '</table>\n<p>Each figure was computed from the files named beside it when the kit was built; <code>kitbuild verify</code> recounts every one from this folder alone.</p>\n'
    for l_1_table in (undefined(name='figure_tables') if l_0_figure_tables is missing else l_0_figure_tables):
        _loop_vars = {}
        pass
        yield '<h2>'
        yield escape((environment.getattr(l_1_table, 'about') or environment.getattr(l_1_table, 'name')))
        yield '</h2>\n<table>\n<tr><th>'
        yield escape(environment.getattr(l_1_table, 'by'))
        yield '</th><th>rows</th>'
        for l_2_c in environment.getattr(l_1_table, 'columns'):
            _loop_vars = {}
            pass
            yield '<th><code>'
            yield escape(l_2_c)
            yield '</code></th>'
        l_2_c = missing
        yield '</tr>\n'
        for l_2_row in environment.getattr(l_1_table, 'rows'):
            _loop_vars = {}
            pass
            yield '<tr><td>'
            yield escape(environment.getattr(l_2_row, 'label'))
            yield '</td><td class="n">'
            yield escape(environment.getattr(l_2_row, 'count'))
            yield '</td>'
            for l_3_cell in environment.getattr(l_2_row, 'cells'):
                _loop_vars = {}
                pass
                yield '<td class="n">'
                yield escape(l_3_cell)
                yield '</td>'
            l_3_cell = missing
            yield '</tr>\n'
        l_2_row = missing
        yield '</table>\n'
    l_1_table = missing
    for l_1_folder in (undefined(name='folders') if l_0_folders is missing else l_0_folders):
        _loop_vars = {}
        pass
        yield '<h2><code>'
        yield escape(environment.getattr(l_1_folder, 'as'))
        yield '/</code></h2>\n'
        if environment.getattr(l_1_folder, 'about'):
            pass
            yield '<p>'
            yield escape(environment.getattr(l_1_folder, 'about'))
            yield '</p>\n'
        yield '<table>\n<tr><th>File</th><th>Bytes</th><th>sha256 (first 12)</th></tr>\n'
        for l_2_f in environment.getattr(l_1_folder, 'files'):
            _loop_vars = {}
            pass
            yield '<tr><td><a href="'
            yield escape(environment.getattr(l_2_f, 'path'))
            yield '"><code>'
            yield escape(environment.getattr(l_2_f, 'path'))
            yield '</code></a></td><td class="n">'
            yield escape(t_2(environment.getattr(l_2_f, 'size')))
            yield '</td><td><code>'
            yield escape(t_1(environment.getattr(l_2_f, 'sha256')))
            yield '</code></td></tr>\n'
        l_2_f = missing
        yield '</table>\n'
        if environment.getattr(l_1_folder, 'more'):
            pass
            yield '<p>…and '
            yield escape(t_2(environment.getattr(l_1_folder, 'more')))
            yield ' more; <a href="index.json">index.json</a> lists them all.</p>\n'
    l_1_folder = missing
    yield '<h2>What was rewritten, by rule</h2>\n'
    if (undefined(name='rules') if l_0_rules is missing else l_0_rules):
        pass
        yield '<ul>\n'
        for l_1_rule in (undefined(name='rules') if l_0_rules is missing else l_0_rules):
            _loop_vars = {}
            pass
            yield '<li><strong><code>'
            yield escape(environment.getattr(l_1_rule, 'name'))
            yield '</code></strong>: '
            yield escape(environment.getattr(l_1_rule, 'sentence'))
            yield ' It fired '
            yield escape(t_2(environment.getattr(l_1_rule, 'total')))
            yield ' time'
            yield escape(('' if (environment.getattr(l_1_rule, 'total') == 1) else 's'))
            yield '.</li>\n'
        l_1_rule = missing
        yield '</ul>\n'
    else:
        pass
        yield '<p>No rule rewrote anything.</p>\n'
    yield '</body>\n</html>\n'

blocks = {}
debug_info = '6=32&14=34&15=36&16=39&18=42&19=50&23=54&24=58&29=84&30=88&32=90&33=100&34=104&38=119&39=123&40=125&41=128&45=131&46=135&49=145&50=148&54=152&56=155&57=159'
