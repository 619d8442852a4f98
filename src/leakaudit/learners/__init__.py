"""Training algorithms that train one model or many at once (see ``_base``)."""

from ._base import Learner, ListModelBank, Model, ModelBank

__all__ = ["Learner", "Model", "ModelBank", "ListModelBank"]
