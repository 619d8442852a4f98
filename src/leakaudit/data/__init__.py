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
from . import sampling
from ._cache import clear_cache
from ._dataset import TASKS, Dataset, from_frame, read_table, table_extension
from ._encoder import TabularEncoder
from ._features import FEATURE_KINDS, MISSING_LABEL, Feature, infer_feature, infer_features
from ._files import DATA_FILES, bundled_dir, data_dir, sha256_of
from .adult import (
    ACS_PROXY_COLUMNS,
    ADULT_CATEGORICAL,
    ADULT_COLUMNS,
    ADULT_NUMERIC,
    LONG_ADULT_COLUMNS,
    load_acs_pums,
    load_adult,
)
from .census import CENSUS_NUMERIC, load_census_kdd
from .images import FASHION_MNIST_CLASSES, ImageDataset, load_fashion_mnist, read_idx
from .purchase import kmeans_labels, load_purchase_kaggle, load_supermarket, supermarket_clusters
from .status import DatasetStatus, dataset_status
from .synthetic import make_gaussian_regression, make_purchase_like, make_texas_like
from .text import BagOfWords, bag_of_words, load_enron_spam, load_spamassassin
from .yeom import IWPC_COLUMNS, load_eyedata, load_iwpc

__all__ = [
    # types and preprocessing
    "Dataset",
    "Feature",
    "FEATURE_KINDS",
    "MISSING_LABEL",
    "TASKS",
    "TabularEncoder",
    "ImageDataset",
    "BagOfWords",
    "from_frame",
    "read_table",
    "table_extension",
    "infer_feature",
    "infer_features",
    "bag_of_words",
    "kmeans_labels",
    # files
    "DataFileError",
    "DATA_FILES",
    "sha256_of",
    "data_dir",
    "bundled_dir",
    "clear_cache",
    "read_idx",
    # loaders
    "load_adult",
    "ADULT_COLUMNS",
    "ADULT_NUMERIC",
    "ADULT_CATEGORICAL",
    "LONG_ADULT_COLUMNS",
    "ACS_PROXY_COLUMNS",
    "load_acs_pums",
    "load_census_kdd",
    "CENSUS_NUMERIC",
    "load_iwpc",
    "IWPC_COLUMNS",
    "load_eyedata",
    "load_spamassassin",
    "load_enron_spam",
    "load_fashion_mnist",
    "FASHION_MNIST_CLASSES",
    "load_supermarket",
    "supermarket_clusters",
    "load_purchase_kaggle",
    # generators
    "make_purchase_like",
    "make_texas_like",
    "make_gaussian_regression",
    # status and sampling
    "DatasetStatus",
    "dataset_status",
    "sampling",
]
