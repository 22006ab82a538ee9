"""One parser per tool output format; see ``base.Parser`` for the contract and ``registry``
for how they are found and chosen."""
