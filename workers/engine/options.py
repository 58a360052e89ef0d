"""Declared options of the alignment methods: one schema per method, checked before anything runs.

Each method module lists its options as ``PARAMS: tuple[Option, ...]`` (name, type, default, range,
help, choices). :func:`check_config` checks a ``config`` dict against such a list — unknown keys,
wrong types, values out of range or not among the choices — and raises one :class:`OptionError`
naming every problem and listing the valid options with their ranges, so the CLI, the web form and
the API all refuse a bad parameter the same way, before a run is queued.

Example:
    >>> from workers.engine.options import Option, check_config
    >>> schema = (Option("k", "int", 8, min=1, help="neighbours"),)
    >>> check_config("demo", schema, {"k": 0})
    Traceback (most recent call last):
    ...
    workers.engine.options.OptionError: bad demo option(s): k: must be >= 1, got 0; valid: k (int >= 1, default 8)
"""
from __future__ import annotations

import copy
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

__all__ = ["Option", "OptionError", "OptionType", "build_config", "check_config", "defaults", "describe",
           "from_text", "option_fields"]

OptionType = Literal["float", "int", "bool", "str", "path", "object", "list", "json"]
"""``path``: a file or directory on the worker (the CLI's business; the web app refuses it and
offers the project's model versions instead); ``json``: any JSON value, what it may be is said by the option's
``clean`` (a band given as ``true`` or ``[low, high]``)."""

C = TypeVar("C")
T = TypeVar("T", bound=type)

_PYTHON_TYPES: dict[str, tuple[type, ...]] = {  # numbers.*: numpy's scalars too (a tuned threshold)
    "float": (numbers.Real,), "int": (numbers.Integral,), "bool": (bool,), "str": (str,), "path": (str,),
    "object": (dict,), "list": (list,), "json": (object,),
}


def _num(x: float) -> str:
    """A bound as people write it: ``2147483647``, not ``2.14748e+09``; ``1e-12`` stays."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e16 else f"{x:g}"


@dataclass(frozen=True)
class Option:
    """One option of a method's ``config``.

    Attributes:
        name: the key in ``config``.
        type: ``float``, ``int``, ``bool``, ``str``, ``path``, ``object`` (a JSON object) or ``list``.
        default: the value used when the key is absent (``None`` = computed by the method).
        min, max: inclusive range of a number.
        help: one line for forms and error messages.
        choices: the valid values of a string option.
        nullable: ``null`` is accepted (= the default behaviour).
        clean: for a value the type alone does not describe (a band, a list of rules, a language): a function
            that returns the value as the command uses it or raises ``ValueError`` saying why it is wrong. It
            runs after the type, range and choices passed; its message is the option's problem.
        options: an ``object`` option's own options (a nested config, e.g. a training request's ``config``): its
            keys and values are checked against them (every problem, ``"key: why; ..."``) and the value is kept as
            given — a check, not a conversion, so no ``clean`` is needed for it.
    """

    name: str
    type: OptionType
    default: Any = None
    min: float | None = None
    max: float | None = None
    help: str = ""
    choices: tuple[str, ...] | None = None
    nullable: bool = False
    clean: Callable[[Any], Any] | None = field(default=None, compare=False, repr=False)
    options: tuple[Option, ...] | None = field(default=None, compare=False, repr=False)

    def describe(self) -> str:
        """``name (type in [min, max], default d)`` for messages."""
        kind = self.type
        if self.choices:
            kind = "one of " + "|".join(self.choices)
        elif self.min is not None and self.max is not None:
            kind += f" in [{_num(self.min)}, {_num(self.max)}]"
        elif self.min is not None:
            kind += f" >= {_num(self.min)}"
        elif self.max is not None:
            kind += f" <= {_num(self.max)}"
        default = "" if self.default is None else f", default {self.default}"
        return f"{self.name} ({kind}{default})"

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not valid for this option, or ``None``."""
        if value is None:
            return None if self.nullable or self.default is None else "must not be null"
        wanted = _PYTHON_TYPES[self.type]
        if not isinstance(value, wanted) or (self.type not in ("bool", "json") and isinstance(value, bool)):
            return f"must be {'an' if self.type[0] in 'aeiou' else 'a'} {self.type}, got {value!r}"
        if self.type == "float" and not math.isfinite(value):  # NaN passes every comparison
            return f"must be a finite number, got {value!r}"
        if self.choices and value not in self.choices:
            return f"unknown {self.name} {value!r}; choose one of: {', '.join(self.choices)}"
        if self.min is not None and value < self.min:
            return f"must be >= {_num(self.min)}, got {value!r}"
        if self.max is not None and value > self.max:
            return f"must be <= {_num(self.max)}, got {value!r}"
        if self.options is not None:
            try:
                check_config(self.name, self.options, value)
            except OptionError as exc:
                return "; ".join(f"{key}: {why}" for key, why in exc.problems.items())
        return None

    def from_text(self, raw: str) -> Any:
        """A form field's, query string's or command-line flag's text as this option's type (blank = the
        default); text that does not convert is returned unchanged, for :meth:`problem` to name.

        Example:
            >>> Option("k", "int", 8).from_text("12"), Option("on", "bool", False).from_text("on")
            (12, True)
        """
        raw = raw.strip()
        if raw == "":
            return copy.deepcopy(self.default)
        try:
            if self.type == "int":
                return int(raw)
            if self.type == "float":
                return float(raw)
        except ValueError:
            return raw
        if self.type == "bool":
            return {"true": True, "on": True, "1": True, "yes": True,
                    "false": False, "off": False, "0": False, "no": False}.get(raw.lower(), raw)
        if self.type == "list":
            return [part.strip() for part in raw.split(",") if part.strip()]
        return raw

    def as_dict(self) -> dict[str, Any]:
        """JSON form for ``GET /api/methods/`` and the run form."""
        return {"name": self.name, "type": self.type, "default": self.default, "min": self.min,
                "max": self.max, "help": self.help, "choices": list(self.choices) if self.choices else None,
                "nullable": self.nullable}


class OptionError(ValueError):
    """Bad options: ``problems`` maps each bad key to why; the message lists the valid options."""

    def __init__(self, method: str, problems: Mapping[str, str], schema: Iterable[Option]) -> None:
        self.method = method
        self.problems = dict(problems)
        self.valid = [o.describe() for o in schema]
        bad = "; ".join(f"{k}: {v}" for k, v in self.problems.items())
        super().__init__(f"bad {method} option(s): {bad}; valid: {', '.join(self.valid)}")


def describe(schema: Iterable[Option]) -> list[dict[str, Any]]:
    """Every option of ``schema`` as JSON."""
    return [o.as_dict() for o in schema]


def check_config(method: str, schema: Iterable[Option], config: Mapping[str, Any]) -> dict[str, Any]:
    """Raise :class:`OptionError` when ``config`` has an unknown key or a bad value; else ``config``'s values
    as each option's ``clean`` returns them.

    Raises:
        OptionError: every problem at once, with the valid options and their ranges.
    """
    schema = tuple(schema)
    by_name = {o.name: o for o in schema}
    problems: dict[str, str] = {}
    cleaned: dict[str, Any] = {}
    for key, value in config.items():
        option = by_name.get(key)
        if option is None:
            problems[key] = "unknown option"
        elif (why := option.problem(value)) is not None:
            problems[key] = why
        elif option.clean is not None and value is not None:
            try:
                cleaned[key] = option.clean(value)
            except ValueError as exc:
                problems[key] = str(exc)
        else:
            cleaned[key] = value
    if problems:
        raise OptionError(method, problems, schema)
    return cleaned


def from_text(schema: Iterable[Option], raw: Mapping[str, Any]) -> dict[str, Any]:
    """``raw``'s text values (a form, a query string, command-line flags) as their options' types; keys
    without an option and values that are not text are kept as they are (:func:`check_config` names them)."""
    by_name = {o.name: o for o in schema}
    return {k: by_name[k].from_text(v) if k in by_name and isinstance(v, str) else v for k, v in raw.items()}


def defaults(schema: Iterable[Option]) -> dict[str, Any]:
    """``{name: default}`` of every option (a fresh copy of a mutable default).

    Example:
        >>> defaults((Option("k", "int", 8, min=1), Option("crf", "object", {})))
        {'k': 8, 'crf': {}}
    """
    return {o.name: copy.deepcopy(o.default) for o in schema}


def build_config(cls: Callable[..., C], what: str, schema: Iterable[Option], config: Mapping[str, Any] | None,
                 base: Mapping[str, Any] | None = None) -> C:
    """``cls(**values)``: the schema's defaults, then ``base``, then ``config`` once :func:`check_config`
    passed (a number given for a float option becomes a Python float). How an engine config (training, the crf
    method, a threshold method, mining) is built from a ``--config`` dict: the schema is the one place
    for its types, ranges, defaults and help.

    Raises:
        OptionError: an unknown key or a bad value (every problem at once).
    """
    schema = tuple(schema)
    config = check_config(what, schema, dict(config or {}))
    floats = {o.name for o in schema if o.type == "float"}
    given = {k: float(v) if k in floats and v is not None else v for k, v in config.items()}
    return cls(**{**defaults(schema), **dict(base or {}), **given})


_ANNOTATIONS = {"float": "float", "int": "int", "bool": "bool", "str": "str", "path": "str", "object": "dict[str, Any]",
                "list": "list[Any]"}


def option_fields(schema: Iterable[Option]) -> Callable[[T], T]:
    """Class decorator, under ``@dataclass``: every option of ``schema`` becomes a field of the class, in
    the schema's order, with the option's default — so a config class does not list its options a second
    time. A field the class declares itself (another type or default) keeps its own declaration at the
    option's place; the class's other fields follow.

    Example:
        >>> @dataclass(frozen=True)
        ... @option_fields((Option("k", "int", 8), Option("names", "list", [])))
        ... class Demo:
        ...     seed: int = 0
        >>> Demo(k=4)
        Demo(k=4, names=[], seed=0)
    """
    schema = tuple(schema)

    def add(cls: T) -> T:
        own = dict(cls.__dict__.get("__annotations__", {}))
        annotations: dict[str, Any] = {}
        for o in schema:
            if o.name in own:
                annotations[o.name] = own.pop(o.name)
                continue
            kind = _ANNOTATIONS[o.type]
            annotations[o.name] = f"{kind} | None" if o.nullable or o.default is None else kind
            default = o.default
            if isinstance(default, (list, dict)):
                setattr(cls, o.name, field(default_factory=lambda d=default: copy.deepcopy(d)))
            else:
                setattr(cls, o.name, default)
        cls.__annotations__ = {**annotations, **own}
        return cls

    return add
