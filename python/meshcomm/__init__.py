"""meshcomm for Python: ``import meshcomm.torch`` registers the torch.distributed backend "meshcomm"."""
