"""Drives the emulator with the client openapi-python-client generated from spec/store-api.yaml, through
Prism's validating proxy (`.ci/foreign-client` starts both): every operation of the spec, the error
envelopes, and a product whose status the spec does not list. Every answer must have the status the
script expects, be read by the generated models, and carry no `sl-violations` header (Prism's report of
a request or answer that breaks the spec); Prism's log must hold no violation either. Exits 1 otherwise.

The same session also runs through `store-api proxy` (`--api` instead of `--prism`): recording in front of
the emulator (`--results` keeps every answer seen), then replaying with the emulator stopped
(`--expect` compares every answer with the recorded run's). The control requests (set-up, not part of
the spec) then go through the proxy too, into a cassette of their own (`X-Store-Api-Cassette: setup`).
"""

import argparse
import enum
import json
import sys
import time
import urllib.request

STORE = "store_alpha"
# A product of the seed that can be ordered (the spec's own example orders it).
ORDERABLE_SKU = "AA-TEE-SUN-BLK-M"
# A status the spec does not list: the seed says statuses can be added within the version.
NEW_STATUS = "scheduled"
# The spec's artwork example downloads from this host; the emulator serves it from its fake hosts.
ARTWORK_URL = "https://artwork.example-cdn.test/sunset-logo.png"
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"


class Failed(Exception):
    """An answer that is not what the spec says."""


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--package", required=True, help="folder holding the generated store_api_client")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--prism", help="Prism's origin (it forwards to the emulator)")
    target.add_argument("--api", help="the base URL to call instead (store-api proxy's, with /store-api/2026-08)")
    parser.add_argument("--emulator", required=True, help="the emulator's origin (control endpoints), or the proxy's")
    parser.add_argument("--prism-log", help="Prism's log, checked for violations (with --prism)")
    parser.add_argument("--key", help="the API key to send (default: store_alpha's, asked of the emulator)")
    parser.add_argument("--name", default="prism proxy --errors", help="what the client went through, for the summary")
    parser.add_argument("--results", help="write every answer seen to this file (JSON)")
    parser.add_argument("--expect", help="compare every answer seen with this file's (a --results of another run)")
    args = parser.parse_args()
    sys.path.insert(0, args.package)
    driver = Driver(args.prism or args.api, args.emulator, args.key)
    try:
        driver.run()
        if args.expect:
            driver.compare(json.load(open(args.expect)))
    except Failed as failure:
        print(f"FAIL {failure}")
        print(f"foreign client: {driver.held} checks held before the failure")
        return 1
    if args.results:
        with open(args.results, "w") as file:
            json.dump(driver.answers, file, indent=1)
    violations = [line.strip() for line in open(args.prism_log) if "Violation:" in line] if args.prism_log else []
    for line in violations:
        print(f"Prism: {line}")
    print(
        f"foreign client (openapi-python-client) through {args.name}: {driver.held} checks held, "
        f"{len(driver.operations)} of the spec's operations called, {len(driver.answers)} answers seen, "
        f"{len(violations)} violations"
    )
    return 1 if violations else 0


class Driver:
    def __init__(self, base_url, emulator, key=None):
        from store_api_client import AuthenticatedClient

        self.emulator = emulator
        # Every answer seen (status and body), with this run's fresh values named, for `--results`/`--expect`.
        self.answers = []
        self.fresh = {}
        if key is None:
            key = next(s["apiKey"] for s in self.control("GET", "/_emulator/stores") if s["id"] == STORE)
        # Every answer is also seen raw, so a failure names what Prism reported about it.
        hooks = {"event_hooks": {"response": [self.record]}}
        self.client = AuthenticatedClient(
            base_url=base_url, token=key, prefix="", auth_header_name="X-API-Key", httpx_args=hooks
        )
        self.wrong_key = AuthenticatedClient(
            base_url=base_url, token="csk_" + "0" * 32, prefix="", auth_header_name="X-API-Key", httpx_args=hooks
        )
        self.last = None
        self.held = 0
        self.operations = set()

    def record(self, response):
        response.read()
        self.last = response
        try:
            body = response.json()
        except ValueError:
            body = response.text
        self.answers.append({
            "request": f"{response.request.method} {self.named(response.request.url.raw_path.decode())}",
            "status": response.status_code,
            "contentType": response.headers.get("content-type"),
            "body": json.loads(self.named(json.dumps(body, sort_keys=True))),
        })

    def named(self, text):
        """`text` with this run's fresh values (external order ids) replaced by their names."""
        for value, name in self.fresh.items():
            text = text.replace(value, name)
        return text

    def compare(self, expected):
        """Every answer the same as in `expected` (another run's `answers`), in the same order."""
        for index, (seen, wanted) in enumerate(zip(self.answers, expected)):
            if seen != wanted:
                raise Failed(f"answer {index} ({seen['request']}) differs from the recorded run's:\n  seen   {json.dumps(seen)[:600]}\n  wanted {json.dumps(wanted)[:600]}")
        if len(self.answers) != len(expected):
            raise Failed(f"{len(self.answers)} answers seen, the recorded run saw {len(expected)}")
        self.check(f"all {len(expected)} answers the same as the recorded run's (status, content type, body)", True, None)

    def prism_report(self):
        """What Prism said about the last answer: its `sl-violations` header and, when it refused the
        answer (`--errors`), the violations in its problem document."""
        if self.last is None or "sl-violations" not in self.last.headers:
            return None
        report = self.last.headers["sl-violations"]
        if self.last.headers.get("content-type", "").startswith("application/problem+json"):
            problem = self.last.json()
            report = "; ".join(v.get("message", "") for v in problem.get("validation", [])) or problem.get("detail", report)
            report = f"{self.last.status_code} {problem.get('title', '')}: {report}"
        return report

    def control(self, method, path, body=None):
        """A control request straight to the emulator (not part of the spec, so not through Prism)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.emulator + path, data=data, method=method)
        # Through `store-api proxy`, the set-up goes into a cassette of its own (the emulator ignores it).
        request.add_header("X-Store-Api-Cassette", "setup")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request) as answer:
            text = answer.read()
        return json.loads(text) if text else None

    def call(self, name, operation, expected_status, expected_type, **kwargs):
        """Calls `operation` through Prism; returns the generated model it read."""
        self.operations.add(operation.__name__.rsplit(".", 1)[-1])
        client = kwargs.pop("client", self.client)
        self.last = None
        try:
            response = operation.sync_detailed(STORE, client=client, **kwargs)
        except Exception as error:  # the generated models refused the answer
            reported = self.prism_report()
            prism = f" (Prism reported {reported})" if reported else ""
            raise Failed(f"{name}: the generated client could not read the answer: {type(error).__name__}: {error}{prism}")
        reported = self.prism_report()
        if reported:
            raise Failed(f"{name}: Prism reported {reported}")
        if response.status_code != expected_status:
            raise Failed(f"{name}: status {response.status_code}, expected {expected_status}: {response.content[:300]!r}")
        if not isinstance(response.parsed, expected_type):
            raise Failed(f"{name}: read as {type(response.parsed).__name__}, expected {expected_type.__name__}")
        return response.parsed

    def check(self, name, condition, seen):
        if not condition:
            raise Failed(f"{name}: saw {seen!r}")
        self.held += 1
        print(f"held {name}")

    def run(self):
        from store_api_client import models
        from store_api_client.api.artworks import create_artwork, get_artwork, list_artworks
        from store_api_client.api.catalog import get_catalog_product, list_catalog_products
        from store_api_client.api.orders import create_order, get_order, list_orders
        from store_api_client.api.products import get_product, list_products
        from store_api_client.api.status import get_status
        from store_api_client.models import SortDirection

        # Set-up through the control endpoints: the app publishes a product with a status added within the
        # version, and the spec's artwork example host serves a PNG.
        self.control("PUT", "/_emulator/artwork-hosts", {ARTWORK_URL: {"contentBase64": PNG_1X1, "contentType": "image/png"}})
        scheduled = self.control(
            "POST",
            f"/_emulator/stores/{STORE}/products",
            {"name": "Scheduled tee", "status": NEW_STATUS, "variants": [{"id": "pv_scheduled_m", "sku": "SCHED-TEE-M", "price": 25}]},
        )

        # The generated model alone, on the emulator's own answer (Prism, below, would refuse the answer
        # first if the spec closed the value set).
        path = f"/store-api/2026-08/stores/{STORE}/products/{scheduled['id']}"
        raw = self.client.get_httpx_client().get(self.emulator + path)
        try:
            read = models.Product.from_dict(raw.json())
        except Exception as error:
            raise Failed(f"the generated Product model cannot read a product with status {NEW_STATUS!r}: {type(error).__name__}: {error}")
        self.check(f"the generated Product model reads status {NEW_STATUS!r} (emulator's answer)", read.status == NEW_STATUS, read.status)

        result = self.call("getStatus", get_status, 200, models.StatusResult)
        self.check("getStatus: ok, version 2026-08, the store", (result.status, result.version, result.store.id) == ("ok", "2026-08", STORE), result)

        blanks = self.call(
            "listCatalogProducts (filter[decorationMethod], sort[name])",
            list_catalog_products, 200, models.CatalogProductList,
            filterdecoration_method="embroidery", sortname=SortDirection.ASC, limit=5,
        )
        names = [blank.name for blank in blanks.items]
        self.check("listCatalogProducts: filter and sort echoed", blanks.query.filter_.additional_properties == {"decorationMethod": ["embroidery"]} and blanks.query.sort.additional_properties.get("name") == "asc", blanks.query)
        self.check("listCatalogProducts: sorted by name, each supports the method", names == sorted(names) and all("embroidery" in map(str, b.decoration_methods) for b in blanks.items) and names, names)
        blank = self.call("getCatalogProduct", get_catalog_product, 200, models.CatalogProduct, catalog_product_id=blanks.items[0].id)
        self.check("getCatalogProduct: known decoration methods read as the generated enum", blank.decoration_methods and all(isinstance(m, enum.Enum) for m in blank.decoration_methods), blank.decoration_methods)

        listed = self.call(
            f"listProducts (filter[status]={NEW_STATUS})", list_products, 200, models.ProductList, filterstatus=NEW_STATUS,
        )
        self.check(f"listProducts: the product with status {NEW_STATUS!r} is listed and read", [(p.id, p.status) for p in listed.items] == [(scheduled["id"], NEW_STATUS)], [(p.id, p.status) for p in listed.items])
        product = self.call("getProduct (a status the spec does not list)", get_product, 200, models.Product, product_id=scheduled["id"])
        self.check(f"getProduct: status {NEW_STATUS!r} kept as a string", product.status == NEW_STATUS and not isinstance(product.status, enum.Enum), product.status)
        page = self.call("listProducts (sort[name], page 2 of 3 per page)", list_products, 200, models.ProductList, sortname=SortDirection.ASC, page=2, limit=3)
        self.check("listProducts: page arithmetic", (page.start_item, page.end_item, page.query.page, page.query.limit) == (4, 6, 2, 3) and page.total_pages == -(-page.total_items // 3), (page.start_item, page.end_item, page.total_items, page.total_pages))
        self.check("listProducts: known statuses read as the generated enum", all(isinstance(p.status, enum.Enum) for p in page.items), [p.status for p in page.items])

        artwork = self.call(
            "createArtwork", create_artwork, 201, models.Artwork,
            body=models.CreateArtworkRequest(name="Sunset logo", image=models.ArtworkSource(url=ARTWORK_URL)),
        )
        artworks = self.call("listArtworks (sort[createdAt])", list_artworks, 200, models.ArtworkList, sortcreated_at=SortDirection.DESC, limit=1)
        self.check("listArtworks: the new artwork first", [a.id for a in artworks.items] == [artwork.id], [a.id for a in artworks.items])
        fetched = self.call("getArtwork", get_artwork, 200, models.Artwork, artwork_id=artwork.id)
        self.check("getArtwork: the same artwork", (fetched.id, fetched.name) == (artwork.id, "Sunset logo"), fetched)

        external_id = f"foreign-{time.time_ns()}"
        # Longest first: the 400's id extends this one.
        self.fresh = {external_id + "-zz": "<external-id-zz>", external_id: "<external-id>"}
        order_body = order_request(models, external_id, "US")
        order = self.call("createOrder", create_order, 201, models.Order, body=order_body)
        self.check("createOrder: pending, known statuses read as the generated enum", (order.status, order.fulfillment_status, order.payment_status) == ("pending", "pending", "due") and isinstance(order.status, enum.Enum), order.status)
        found = self.call(
            "listOrders (filter[externalOrderId], filter[status])", list_orders, 200, models.OrderList,
            filterexternal_order_id=external_id, filterstatus="pending", sortupdated_at=SortDirection.DESC,
        )
        self.check("listOrders: found by its external id", [o.id for o in found.items] == [order.id], [o.id for o in found.items])
        again = self.call("getOrder", get_order, 200, models.Order, order_id=order.id)
        self.check("getOrder: the same order", (again.id, again.external_order_id) == (order.id, external_id), again.id)

        # The error envelopes.
        conflict = self.call("createOrder again (409)", create_order, 409, models.Error, body=order_body)
        self.check("409: the Conflict envelope", (conflict.status_code, conflict.error) == (409, "Conflict"), conflict)
        invalid = self.call("createOrder with country ZZ (400)", create_order, 400, models.Error, body=order_request(models, external_id + "-zz", "ZZ"))
        self.check("400: a validation failure's message is an array naming the field", (invalid.status_code, invalid.error) == (400, "Bad Request") and isinstance(invalid.message, list) and "country" in invalid.message[0], invalid.message)
        missing = self.call("getProduct of no product (404)", get_product, 404, models.Error, product_id="prod_does_not_exist")
        self.check("404: Product not found", (missing.status_code, missing.error, missing.message) == (404, "Not Found", "Product not found"), missing)
        refused = self.call("getStatus with a wrong key (401)", get_status, 401, models.Error, client=self.wrong_key)
        self.check("401: Invalid API key", (refused.status_code, refused.error, refused.message) == (401, "Unauthorized", "Invalid API key"), refused)
        # Prism answers a path outside the spec itself, so this one is asked of the emulator directly.
        path = f"/store-api/2026-08/stores/{STORE}/no-such-route"
        unserved = self.client.get_httpx_client().get(self.emulator + path)
        envelope = models.Error.from_dict(unserved.json())
        self.check("404: Cannot GET an unserved path (emulator, not through Prism)", (unserved.status_code, envelope.status_code, envelope.message) == (404, 404, f"Cannot GET {path}"), unserved.text)

        spec_operations = {
            "get_status", "list_catalog_products", "get_catalog_product", "list_products", "get_product",
            "create_artwork", "list_artworks", "get_artwork", "create_order", "list_orders", "get_order",
        }
        self.check("every operation of the spec called", self.operations == spec_operations, sorted(spec_operations ^ self.operations))


def order_request(models, external_id, country):
    return models.CreateOrderRequest(
        external_order_id=external_id,
        line_items=[models.LineItemInput(sku=ORDERABLE_SKU, quantity=1)],
        shipping_address=models.ShippingAddressInput(
            first_name="Ada",
            last_name="Lovelace",
            address=models.AddressInput(
                street_address="1 Main Street", city_or_town="Austin", state_or_province="TX",
                zip_or_postal_code="78701", country=country,
            ),
        ),
    )


if __name__ == "__main__":
    sys.exit(main())
