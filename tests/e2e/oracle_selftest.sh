#!/usr/bin/env bash
# The PyTorch oracle checks itself (tests/oracle/torch_oracle.py --selftest):
# its model pieces against independent formulations, AdamW against torch's,
# and the comparison path on generated files. Skips where torch is missing.
set -u
py=/usr/bin/python3
if ! "$py" -c 'import torch, numpy' 2>/dev/null; then
    echo "skip: /usr/bin/python3 lacks torch or numpy (apt-get install python3-torch python3-numpy)"
    exit 77
fi
exec "$py" "$PLC_ROOT/tests/oracle/torch_oracle.py" --selftest --threads 2
