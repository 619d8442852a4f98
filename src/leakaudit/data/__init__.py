"""Datasets: typed tables, checksummed loaders, the papers' preprocessing, generators, sampling.

Real data files are found via ``$LEAKAUDIT_DATA`` or a ``shared/data`` folder beside the
checkout (see :mod:`leakaudit.data._files`); Adult is also bundled in the package. Nothing
is ever downloaded. Each file's SHA-256 is checked before parsing; parsed files are cached
in-process (:func:`clear_cache` frees them).

Tabular loaders return a :class:`Dataset` (raw features in ``.frame``, labels in ``.y``,
typed ``.features``, ``.sensitive`` columns); ``Dataset.encode(fit_idx)`` applies the papers'
preprocessing (:class:`TabularEncoder`: numeric z-scored with statistics of ``fit_idx``,
then binary 0/1, then one-hot groups with missing as its own category).
Index sampling helpers live in :mod:`leakaudit.data.sampling`.
"""

from ..exceptions import DataFileError
from . import _dataset, _encoder, _features, adult, census, images, purchase, sampling, status, synthetic, text, yeom
from ._cache import clear_cache
from ._dataset import *  # noqa: F403
from ._encoder import *  # noqa: F403
from ._features import *  # noqa: F403
from ._files import DATA_FILES, bundled_dir, data_dir, sha256_of
from .adult import *  # noqa: F403
from .census import *  # noqa: F403
from .images import *  # noqa: F403
from .purchase import *  # noqa: F403
from .status import *  # noqa: F403
from .synthetic import *  # noqa: F403
from .text import *  # noqa: F403
from .yeom import *  # noqa: F403

# types and preprocessing, files, loaders, generators, status and sampling: each module's ``__all__``; of _files and
# _cache, the names imported above
__all__ = [
    *_dataset.__all__, *_features.__all__, *_encoder.__all__, "DataFileError", "DATA_FILES",
    "sha256_of", "data_dir", "bundled_dir", "clear_cache", *adult.__all__, *census.__all__, *yeom.__all__,
    *text.__all__, *images.__all__, *purchase.__all__, *synthetic.__all__, *status.__all__, "sampling",
]
