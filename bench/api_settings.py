"""The production settings with the bench's URLs (one bare DRF endpoint beside the API): bench/api_throughput.py."""

from lexery.settings import *  # noqa: F403

ROOT_URLCONF = "bench.api_urls"
