"""The operations cryptobench knows (ops.py: names, parameters, payloads), the C header generated
from them for every harness (c_header.py), and the checks a vector file must pass against them
(vector_check.py; the vectors themselves: vectors/)."""
