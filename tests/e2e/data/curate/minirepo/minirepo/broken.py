# Not valid Python: one rejected file record.
class Broken(nn.Module)
    pass
