"""The terminal side-by-side table and the one-line verdict."""


def render(view):
    labels = [c.key for c in view.columns]
    first = max([len(r[0]) + 2 for _, rows in view.sections for r in rows] +
                [len(t) for t, _ in view.sections])
    widths = [max(10, len(lab) + 2) for lab in labels]
    for _, rows in view.sections:
        for _, cells in rows:
            widths = [max(w, len(str(x)) + 2) for w, x in zip(widths, cells)]
    lines = [view.title, "",
             " " * first + "".join(lab.rjust(w) for lab, w in zip(labels, widths))]
    for title, rows in view.sections:
        lines.append(title)
        for label, cells in rows:
            lines.append(("  " + label).ljust(first) +
                         "".join(str(x).rjust(w) for x, w in zip(cells, widths)))
    lines += view.trailer
    lines += ["", f"verdict: {view.verdict.upper()}: {view.headline}"]
    return "\n".join(lines) + "\n"
