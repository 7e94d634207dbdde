"""Plain-value text and JSON helpers: JSON-safe text (`jsonsafe.py`), long strings kept whole
(`long_strings.py`), streamed pieces joined in chunks (`pieces.py`), OpenAI-format messages (`openai.py`)."""
