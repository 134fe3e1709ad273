"""One escaping function per sink for text that comes from result files.

Result directories come from test hosts and from other people: a host
directory's name, a kernel version string or a label in a JSON file is
data, and reaches gnuplot, HTML, file names and shells only through these
functions. Each returns text that the sink reads as one inert value.
"""
import hashlib
import html
import re
import shlex

from .files import DataError

# C0 controls and DEL: a newline ends a gnuplot command (and a datablock
# line), the rest have no business in a label.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def gnuplot_string(text):
    """A gnuplot string literal for a command line (titles, labels, file
    names). Single quotes: gnuplot runs backquoted text inside double-quoted
    strings, never inside single-quoted ones, and reads no backslash escape
    there; a quote is doubled. Callers add `noenhanced` where the text is
    not markup."""
    return "'" + _CONTROL.sub(" ", str(text)).replace("'", "''") + "'"


def gnuplot_datum(text):
    """A string field of an inline datablock (`$name << EOD`): one
    double-quoted field on one line. Datablock lines are data, never
    substituted, but a newline would end the line (and a line "EOD" the
    block, making the rest commands), and a double quote the field."""
    return '"' + _CONTROL.sub(" ", str(text)).replace('"', "'") + '"'


def html_text(text):
    """Text for an HTML element or a quoted attribute value."""
    return html.escape(str(text), quote=True)


_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def file_name(text):
    """A file name component made from data: letters, digits, '_', '.', '-'
    only, no leading dot, at most 64 characters. A name that had to change
    gets a short hash of the original, so two names never collide."""
    text = str(text)
    safe = _UNSAFE_NAME.sub("_", text).lstrip(".")[:48]
    if safe == text and safe:
        return safe
    return f"{safe}-{hashlib.sha256(text.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}"


def shell_word(text):
    """One word for a POSIX shell command line or an assignment's value."""
    return shlex.quote(str(text))


def gnuplot_number(value, what="a number"):
    """A finite number for a gnuplot command line; anything else (a string,
    a bool, NaN) is a DataError naming WHAT, never text in the command."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value \
            or value in (float("inf"), float("-inf")):
        raise DataError(f"{what}: expected a finite number, got {value!r:.60}")
    try:
        return repr(float(value))
    except OverflowError:
        raise DataError(f"{what}: expected a finite number, got one of {len(str(value))} digits")
