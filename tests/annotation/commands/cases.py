"""Inputs several command tests share."""

#: JSON Python's json module takes but nothing can store, and what each command says about it.
STRICT_JSON = [
    ('{"k": NaN}', "{opt}: NaN is not valid JSON"),
    ('{"k": -Infinity}', "{opt}: -Infinity is not valid JSON"),
    ('{"k": 1e999}', "{opt}: number 1e999 out of range (not finite)"),
    ('{"k": 99999999999999999999}', "{opt}.k: integer out of range"),
    ('{"k": ["\\ud800"]}', "{opt}.k[0]: is not valid Unicode (a lone surrogate)"),
    ('{"k": "\udcff"}', "{opt}.k: is not valid Unicode (a lone surrogate)"),  # an undecodable byte in argv
    ('[1]', "{opt}: must be a JSON object, not an array"),
    ('{bad', "{opt}: Expecting property name"),
]
