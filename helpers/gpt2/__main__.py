"""``python -m helpers.gpt2`` (what ``bash run.sh gpt2`` runs): fetch GPT-2's files once."""

import sys

from helpers.gpt2.hub import main

sys.exit(main())
