"""fsspec-style ``storage_options`` in obstore's terms, and the choice of a store for a URL.

Code written for fsspec passes s3fs / gcsfs / adlfs keywords (``key``, ``secret``, ``anon``,
``client_kwargs={'endpoint_url': ...}``, ``token='anon'``, ``sas_token``...).
:func:`obstore_kwargs` turns them into the keywords of ``obstore.store.from_url``; obstore's own
configuration keys (``region``, ``endpoint``, ``aws_access_key_id``, ``skip_signature``...)
and its ``client_options`` and ``retry_config`` pass through unchanged.  An option with no
obstore equivalent raises :class:`~zarrkit.errors.StorageOptionsError`.

:func:`~zarrkit.storage.coerce.coerce_store` opens ``s3://``, ``gs://``, ``az://``/``abfs://`` and ``http(s)://`` URLs
with :class:`~zarrkit.storage.obstore.ObjectStore` when ``zarrkit.config.remote`` is
``'obstore'`` (the default when obstore is installed), with
:class:`~zarrkit.storage.fsspec.FsspecStore` otherwise.  When the storage options hold something
obstore cannot take (``config_kwargs``, ``skip_instance_cache``, a session object...) the URL
is opened with fsspec, so code written for fsspec keeps working; without fsspec the
:class:`~zarrkit.errors.StorageOptionsError` names those options.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from ..config import config
from ..errors import StorageOptionsError

__all__ = ["OBSTORE_SCHEMES", "obstore_kwargs", "use_obstore"]

#: URL schemes opened with obstore, and the service family their options belong to
OBSTORE_SCHEMES = {
    "s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs",
    "az": "azure", "abfs": "azure", "abfss": "azure", "adl": "azure", "azure": "azure",
    "http": "http", "https": "http",
}

#: fsspec keywords that mean nothing to obstore and change nothing about the data read
_IGNORED = {"asynchronous", "loop", "use_listings_cache", "listings_expiry_time", "max_paths",
            "skip_instance_cache", "project"}

#: per family: fsspec keyword -> obstore configuration key
_RENAMES = {
    "s3": {"key": "access_key_id", "secret": "secret_access_key", "token": "session_token",
           "endpoint_url": "endpoint", "region_name": "region", "requester_pays": "request_payer"},
    "gcs": {"endpoint_url": "base_url"},
    "azure": {"sas_token": "sas_key", "account_host": "endpoint"},
    "http": {},
}


def scheme_of(url: str) -> str:
    return url.split("://", 1)[0].lower() if "://" in url else ""


def obstore_kwargs(url: str, options: dict[str, Any]) -> dict[str, Any]:
    """The keywords of ``obstore.store.from_url(url, ...)`` meaning what the fsspec-style
    ``options`` mean.

    Examples
    --------
    >>> from zarrkit.storage.obstore_options import obstore_kwargs
    >>> kw = obstore_kwargs('s3://bucket/x', {'key': 'K', 'secret': 'S', 'client_kwargs': {
    ...     'endpoint_url': 'http://127.0.0.1:9000', 'region_name': 'eu-west-1'}})
    >>> sorted(kw.items())  # doctest: +NORMALIZE_WHITESPACE
    [('access_key_id', 'K'), ('client_options', {'allow_http': True}),
     ('endpoint', 'http://127.0.0.1:9000'), ('region', 'eu-west-1'), ('secret_access_key', 'S')]
    >>> obstore_kwargs('gs://bucket/x', {'token': 'anon'})
    {'skip_signature': True}
    >>> obstore_kwargs('s3://bucket/x', {'config_kwargs': {'max_pool_connections': 50}})
    Traceback (most recent call last):
    ...
    zarrkit.errors.StorageOptionsError: storage options ['config_kwargs'] for 's3://bucket/x' have no obstore equivalent (use them with zarrkit.config.set(remote='fsspec'), or give obstore's own keys)
    """
    family = OBSTORE_SCHEMES.get(scheme_of(url))
    if family is None:
        raise StorageOptionsError(f"{url!r} is not a URL obstore opens here (s3, gs, az, http)")
    opts = dict(options)
    client = dict(opts.pop("client_options", None) or {})
    out: dict[str, Any] = {}
    unsupported: list[str] = []
    if "retry_config" in opts:
        out["retry_config"] = opts.pop("retry_config")
    for name in _IGNORED & set(opts):
        del opts[name]
    kwargs = opts.pop("client_kwargs", None) or {}
    for k, v in dict(kwargs).items():
        if k in ("endpoint_url", "region_name"):
            opts.setdefault(k, v)
        elif k == "verify" and v is False:
            client["allow_invalid_certificates"] = True
        else:
            unsupported.append(f"client_kwargs[{k!r}]")
    if "anon" in opts:
        opts["skip_signature"] = bool(opts.pop("anon"))
    if family == "gcs" and isinstance(opts.get("token"), str):
        token = opts.pop("token")
        if token == "anon":
            opts["skip_signature"] = True
        elif token not in ("google_default", "cloud"):  # default credentials: obstore's too
            opts["service_account"] = token  # a service account JSON file
    if family == "s3" and opts.get("use_ssl") is False:
        opts.pop("use_ssl")
        client["allow_http"] = True
    if family == "http":
        headers = opts.pop("headers", None)
        if headers:
            client["default_headers"] = dict(headers)
        unsupported += sorted(opts)
        opts = {}
    renames = _RENAMES[family]
    for k, v in opts.items():
        if isinstance(v, (dict, list, tuple, set)) or (v is not None and not isinstance(v, (str, bool, int, float))):
            unsupported.append(k)  # obstore's configuration values are plain strings
            continue
        if v is not None:
            out[renames.get(k, k)] = v
    endpoint = str(out.get("endpoint", out.get("aws_endpoint", "")))
    if endpoint.startswith("http://") or scheme_of(url) == "http":
        client.setdefault("allow_http", True)
    if client:
        out["client_options"] = client
    if unsupported:
        raise StorageOptionsError(
            f"storage options {sorted(set(unsupported))} for {url!r} have no obstore equivalent "
            "(use them with zarrkit.config.set(remote='fsspec'), or give obstore's own keys)"
        )
    return out


def obstore_url(url: str) -> str:
    """``url`` as obstore spells it (``gcs://`` is ``gs://`` there)."""
    return "gs://" + url[len("gcs://"):] if scheme_of(url) == "gcs" else url


def use_obstore(url: str) -> bool:
    """Whether ``url`` is opened with obstore (a remote scheme it knows, a plain URL rather
    than an fsspec chain, ``config.remote == 'obstore'``, obstore installed)."""
    return (
        config.remote == "obstore"
        and scheme_of(url) in OBSTORE_SCHEMES
        and "::" not in url
        and importlib.util.find_spec("obstore") is not None
    )


def fsspec_available() -> bool:
    return importlib.util.find_spec("fsspec") is not None
