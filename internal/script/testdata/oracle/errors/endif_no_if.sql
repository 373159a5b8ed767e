\endif
