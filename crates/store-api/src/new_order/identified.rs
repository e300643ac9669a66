//! A create-order request that carries its external order id: what [`Orders::submit`] takes.
//!
//! [`Orders::submit`]: crate::Orders::submit

use super::BuildError;
use super::NewOrder;

/// A create-order request with an `externalOrderId` that can be looked up: the only request
/// [`Orders::submit`](crate::Orders::submit) takes, because the id is what makes its retries safe.
///
/// Made by [`OrderBuilder::build`](crate::OrderBuilder::build), or from a request read from a file:
///
/// ```no_run
/// use store_api::{IdentifiedOrder, NewOrder};
/// # async fn run(client: store_api::Client) -> Result<(), Box<dyn std::error::Error>> {
/// let read: NewOrder = serde_json::from_slice(&std::fs::read("order.json")?)?;
/// // Refused, naming `externalOrderId`, when the file has none.
/// let order = IdentifiedOrder::try_from(read)?;
/// client.orders().submit(&order).await?;
/// # Ok(())
/// # }
/// ```
///
/// It deserializes from the request's JSON through the same check.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(try_from = "NewOrder")]
pub struct IdentifiedOrder {
    request: NewOrder,
    external_order_id: String,
}

impl IdentifiedOrder {
    /// The request; its `external_order_id` is set.
    pub fn as_request(&self) -> &NewOrder {
        &self.request
    }

    /// The request, owned.
    pub fn into_request(self) -> NewOrder {
        self.request
    }

    /// The external order id.
    pub fn external_order_id(&self) -> &str {
        &self.external_order_id
    }
}

impl TryFrom<NewOrder> for IdentifiedOrder {
    type Error = BuildError;

    /// Refuses a request without an `externalOrderId`, or with one no lookup can find (a comma).
    fn try_from(request: NewOrder) -> Result<Self, BuildError> {
        let external_order_id = request
            .external_order_id
            .as_deref()
            .ok_or_else(|| {
                BuildError::at(
                    "externalOrderId",
                    "missing: a submission needs one (see new_external_order_id), or a retry could bill twice",
                )
            })?
            .to_owned();
        super::check_filterable_external_id(&external_order_id)
            .map_err(|e| BuildError::at("externalOrderId", e))?;
        Ok(Self {
            request,
            external_order_id,
        })
    }
}

impl AsRef<NewOrder> for IdentifiedOrder {
    fn as_ref(&self) -> &NewOrder {
        &self.request
    }
}

impl serde::Serialize for IdentifiedOrder {
    /// As the request: the wire JSON.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.request.serialize(serializer)
    }
}
