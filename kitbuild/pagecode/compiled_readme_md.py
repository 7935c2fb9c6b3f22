# Generated from templates/README.md.j2 by `python -m kitbuild.pagecode`; do not edit.
# mypy: ignore-errors
from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'README.md.j2'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_title = resolve('title')
    l_0_summary = resolve('summary')
    l_0_folders = resolve('folders')
    l_0_records = resolve('records')
    l_0_figures_table = resolve('figures_table')
    l_0_figure_tables = resolve('figure_tables')
    l_0_rules = resolve('rules')
    l_0_external_digests = resolve('external_digests')
    l_0_not_here = resolve('not_here')
    l_0_date = resolve('date')
    l_0_licence = resolve('licence')
    try:
        t_1 = environment.filters['cell']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'cell' found.")
    try:
        t_2 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_3 = environment.filters['short']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'short' found.")
    try:
        t_4 = environment.filters['thousands']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'thousands' found.")
    pass
    yield '# '
    yield str((undefined(name='title') if l_0_title is missing else l_0_title))
    yield '\n\n'
    if (undefined(name='summary') if l_0_summary is missing else l_0_summary):
        pass
        yield str((undefined(name='summary') if l_0_summary is missing else l_0_summary))
        yield '\n\n'
    if (t_2((undefined(name='folders') if l_0_folders is missing else l_0_folders)) == 1):
        pass
        yield 'One folder:\n'
    else:
        pass
        yield str(t_2((undefined(name='folders') if l_0_folders is missing else l_0_folders)))
        yield ' folders, one for each source:\n'
    yield '\n'
    for l_1_folder in (undefined(name='folders') if l_0_folders is missing else l_0_folders):
        _loop_vars = {}
        pass
        yield '- `'
        yield str(environment.getattr(l_1_folder, 'as'))
        yield '/`'
        if environment.getattr(l_1_folder, 'about'):
            pass
            yield ': '
            yield str(environment.getattr(l_1_folder, 'about'))
        yield ' ('
        yield str(t_4(environment.getattr(l_1_folder, 'count')))
        yield ' file'
        yield str(('' if (environment.getattr(l_1_folder, 'count') == 1) else 's'))
        yield ').\n'
    l_1_folder = missing
    yield "\nInside each folder the files keep the bench's own layout. Every file was copied from the bench's own\nrecord and rewritten only by the named rules in `provenance.json`. `index.json` lists every file but\nitself, `provenance.json`, this README and `index.html`, each with its size and sha256. `SHA256SUMS`\ncarries the same digests for the "
    yield str(t_4((undefined(name='records') if l_0_records is missing else l_0_records)))
    yield ' record files, so `sha256sum -c SHA256SUMS`, run\nin this folder, checks them; `kitbuild verify` checks everything else this README says.\n\n'
    if (undefined(name='figures_table') if l_0_figures_table is missing else l_0_figures_table):
        pass
        yield '## Where each figure on the page comes from\n\n| On the page | File here | Fields |\n|---|---|---|\n'
        l_1_loop = missing
        for l_1_row, l_1_loop in LoopContext((undefined(name='figures_table') if l_0_figures_table is missing else l_0_figures_table), undefined):
            _loop_vars = {}
            pass
            yield '| '
            yield str(t_1(environment.getattr(l_1_row, 'page')))
            yield ' | '
            l_2_loop = missing
            for l_2_f, l_2_loop in LoopContext(environment.getattr(l_1_row, 'files'), undefined):
                _loop_vars = {}
                pass
                yield '`'
                yield str(t_1(l_2_f))
                yield '`'
                yield str((', ' if (not environment.getattr(l_2_loop, 'last')) else cond_expr_undefined("the inline if-expression on line 31 in 'README.md.j2' evaluated to false and no else section was defined.")))
            l_2_loop = l_2_f = missing
            yield ' | '
            l_2_loop = missing
            for l_2_f, l_2_loop in LoopContext(environment.getattr(l_1_row, 'fields'), undefined):
                _loop_vars = {}
                pass
                yield '`'
                yield str(t_1(l_2_f))
                yield '`'
                yield str((', ' if (not environment.getattr(l_2_loop, 'last')) else cond_expr_undefined("the inline if-expression on line 31 in 'README.md.j2' evaluated to false and no else section was defined.")))
            l_2_loop = l_2_f = missing
            yield ' |\n'
        l_1_loop = l_1_row = missing
        yield '\nEach figure was computed from the files named beside it when the kit was built, never typed;\n`provenance.json` holds how each is counted and its value, and `kitbuild verify` recounts every one\nfrom this folder alone.\n\n'
    for l_1_table in (undefined(name='figure_tables') if l_0_figure_tables is missing else l_0_figure_tables):
        _loop_vars = {}
        pass
        yield '## '
        yield str((environment.getattr(l_1_table, 'about') or environment.getattr(l_1_table, 'name')))
        yield '\n\n| '
        yield str(t_1(environment.getattr(l_1_table, 'by')))
        yield ' | rows |'
        for l_2_c in environment.getattr(l_1_table, 'columns'):
            _loop_vars = {}
            pass
            yield ' `'
            yield str(l_2_c)
            yield '` |'
        l_2_c = missing
        yield '\n|---|---:|'
        for l_2_c in environment.getattr(l_1_table, 'columns'):
            _loop_vars = {}
            pass
            yield '---:|'
        l_2_c = missing
        yield '\n'
        for l_2_row in environment.getattr(l_1_table, 'rows'):
            _loop_vars = {}
            pass
            yield '| '
            yield str(t_1(environment.getattr(l_2_row, 'label')))
            yield ' | '
            yield str(environment.getattr(l_2_row, 'count'))
            yield ' |'
            for l_3_cell in environment.getattr(l_2_row, 'cells'):
                _loop_vars = {}
                pass
                yield ' '
                yield str(l_3_cell)
                yield ' |'
            l_3_cell = missing
            yield '\n'
        l_2_row = missing
        yield '\n'
    l_1_table = missing
    yield '## The files\n\n'
    for l_1_folder in (undefined(name='folders') if l_0_folders is missing else l_0_folders):
        _loop_vars = {}
        pass
        yield '### `'
        yield str(environment.getattr(l_1_folder, 'as'))
        yield '/`\n\n| File | Bytes | sha256 (first 12) |\n|---|---:|---|\n'
        for l_2_f in environment.getattr(l_1_folder, 'files'):
            _loop_vars = {}
            pass
            yield '| `'
            yield str(environment.getattr(l_2_f, 'path'))
            yield '` | '
            yield str(t_4(environment.getattr(l_2_f, 'size')))
            yield ' | `'
            yield str(t_3(environment.getattr(l_2_f, 'sha256')))
            yield '` |\n'
        l_2_f = missing
        if environment.getattr(l_1_folder, 'more'):
            pass
            yield '\n…and '
            yield str(t_4(environment.getattr(l_1_folder, 'more')))
            yield ' more; `index.json` lists them all.\n'
        yield '\n'
    l_1_folder = missing
    yield '## What was rewritten, by rule\n\n'
    if (undefined(name='rules') if l_0_rules is missing else l_0_rules):
        pass
        yield '`provenance.json` names every rule and counts every firing, file by file:\n\n'
        for l_1_rule in (undefined(name='rules') if l_0_rules is missing else l_0_rules):
            _loop_vars = {}
            pass
            yield '- **`'
            yield str(environment.getattr(l_1_rule, 'name'))
            yield '`**: '
            yield str(environment.getattr(l_1_rule, 'sentence'))
            yield ' It fired '
            yield str(t_4(environment.getattr(l_1_rule, 'total')))
            yield ' time'
            yield str(('' if (environment.getattr(l_1_rule, 'total') == 1) else 's'))
            if environment.getattr(l_1_rule, 'firings'):
                pass
                yield ' in '
                yield str(t_4(t_2(environment.getattr(l_1_rule, 'firings'))))
                yield ' file'
                yield str(('' if (t_2(environment.getattr(l_1_rule, 'firings')) == 1) else 's'))
            yield '.\n'
            for (l_2_path, l_2_n) in environment.call(context, environment.getattr(environment.getattr(l_1_rule, 'firings'), 'items'), _loop_vars=_loop_vars):
                _loop_vars = {}
                pass
                yield '  - `'
                yield str(l_2_path)
                yield '`: '
                yield str(t_4(l_2_n))
                yield '\n'
            l_2_path = l_2_n = missing
        l_1_rule = missing
        yield '\nNothing else moved: every other byte of every record is as the bench wrote it.\n'
    else:
        pass
        yield 'No rule rewrote anything: every record is byte for byte as the bench wrote it.\n'
    if (undefined(name='external_digests') if l_0_external_digests is missing else l_0_external_digests):
        pass
        yield '\n## Digests of files that are not here\n\nRecords print these sha256 digests of files outside this kit:\n\n'
        for (l_1_digest, l_1_why) in environment.call(context, environment.getattr((undefined(name='external_digests') if l_0_external_digests is missing else l_0_external_digests), 'items')):
            _loop_vars = {}
            pass
            yield '- `'
            yield str(l_1_digest)
            yield '`: '
            yield str(l_1_why)
            yield '\n'
        l_1_digest = l_1_why = missing
    yield '\n## What is not here\n\n'
    if (undefined(name='not_here') if l_0_not_here is missing else l_0_not_here):
        pass
        yield str((undefined(name='not_here') if l_0_not_here is missing else l_0_not_here))
        yield '\n'
    else:
        pass
        yield "Only the files listed above; the bench's other records were not published.\n"
    yield "\nThe kit's date is "
    yield str((undefined(name='date') if l_0_date is missing else l_0_date))
    yield '.'
    if (undefined(name='licence') if l_0_licence is missing else l_0_licence):
        pass
        yield ' Licence: '
        yield str((undefined(name='licence') if l_0_licence is missing else l_0_licence))
        yield '.'
    yield '\n'

blocks = {}
debug_info = '3=47&5=49&6=51&9=53&12=58&15=61&16=65&22=78&25=80&30=84&31=88&39=112&40=116&42=118&44=128&46=134&47=138&54=154&55=158&59=160&60=164&62=171&64=174&70=179&73=182&74=186&75=200&76=204&84=214&90=217&91=221&97=227&98=229&103=235'
