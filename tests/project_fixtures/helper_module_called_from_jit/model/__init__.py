from .clipping import clip_by_norm
