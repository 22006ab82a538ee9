"""The compiled pass's interface (``_fio_json_pass.c``; used by ``_fio_json_walked``)."""

def walk(raw: dict[str, int], prev_counts: bytes | None, prev_keys: list[str] | None,
         cuts: list[int] | None) -> tuple[int, bytes, bytes, list[str], list[int] | None] | None:
    ...
def find(keys: list[str], sums: bytes, qs: list[tuple[float, str]]
         ) -> list[tuple[str, float]] | None: ...
