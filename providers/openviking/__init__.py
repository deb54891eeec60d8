"""OpenViking provider: each tenant scope is one OpenViking user, in trusted mode.

Every request carries ``X-OpenViking-Account`` (the operator's account) and
``X-OpenViking-User`` = the scope's backend key, so the server keeps each scope in its own
``viking://user/<backend key>/`` space. Memory the tools write goes under
``viking://user/<key>/memories/<category>/`` (the reference wrote ``viking://user/peers/…``,
which current servers refuse with 400 INVALID_URI). Tool URIs outside the caller's space,
and resource URLs that are not public http(s), are refused before any request is made.
Turns are added to an OpenViking session created explicitly before its first messages and
committed (archive + memory extraction) when the mnemogate session ends.
"""
