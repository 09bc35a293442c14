"""Token estimates without a tokenizer: about four bytes of UTF-8 per token.

Close enough for budgets across models (English ≈ 4 chars/token; accented text
and CJK cost more bytes per character and, in practice, more tokens too).
"""


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    if text.isascii():
        return (len(text) + 3) // 4
    return (len(text.encode("utf-8", "replace")) + 3) // 4
