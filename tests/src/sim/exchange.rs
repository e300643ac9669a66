//! The alphabet of the model: what the simulated network can do with one exchange, and its text form
//! (what a failure prints, and what a replay reads back).

use std::fmt;
use std::str::FromStr;

/// What the network does with one exchange between the client and the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Exchange {
    /// The request reaches the service and its answer comes back intact.
    Deliver,
    /// The request is lost before the service: nothing comes back.
    LostBefore,
    /// The service processes the request; its answer is lost.
    LostAfter,
    /// The connection is reset before the service reads the request.
    ResetBefore,
    /// The service processes the request; the connection is reset instead of the answer.
    ResetAfter,
    /// The service processes the request; its status and headers arrive (a full `Content-Length`),
    /// then half the body, then the connection breaks.
    Truncated,
    /// The service processes the request; its whole answer arrives after the client's deadline.
    Late,
    /// The service processes the request; a `200` arrives whose body never ends (fast: the client's
    /// size limit stops it).
    Endless,
    /// The service processes the request; a `200` arrives whose body trickles forever (the client's
    /// deadline stops it).
    Trickle,
    /// Something on the way answers a redirect with this status to another host instead.
    Redirect(u16),
    /// Something on the way answers an HTML page with this status instead (a firewall, a gateway).
    Page(u16),
    /// The service processes the request; something on the way replaces its answer with an HTML page
    /// with this status.
    PageAfter(u16),
    /// Something on the way (or the service's edge) answers 429 with this `Retry-After` instead.
    RateLimited(RetryAfter),
    /// Something on the way (a cache) answers instead with the last answer it passed on for the same
    /// method and path: for a `POST /orders`, another order's `201`.
    Stale,
}

/// The `Retry-After` of a simulated 429.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RetryAfter {
    /// No header.
    Absent,
    /// This many seconds.
    Seconds(u64),
    /// A value that is not a number of seconds.
    Garbage,
}

impl Exchange {
    /// Whether the service processes the request (an order sent this way is placed when valid).
    pub fn reaches_service(self) -> bool {
        matches!(
            self,
            Exchange::Deliver
                | Exchange::LostAfter
                | Exchange::ResetAfter
                | Exchange::Truncated
                | Exchange::Late
                | Exchange::Endless
                | Exchange::Trickle
                | Exchange::PageAfter(_)
        )
    }

    /// The alphabet the exhaustive exploration draws every exchange from: the kinds of the model, one
    /// symbol each (the set: delivered; lost before the service; processed and the answer
    /// lost; answered by something on the way instead with a redirect, a 4xx page, a 5xx page, a 429 or
    /// a reset; truncated; late; endless). A symbol's parameters turn with the exchange's position
    /// ([`Exchange::at`]), so every parameter of a kind appears in the exhaustive set; every combination
    /// of parameters is the random schedules' part.
    pub const EXHAUSTIVE: [Exchange; 11] = [
        Exchange::Deliver,
        Exchange::LostBefore,
        Exchange::LostAfter,
        Exchange::ResetBefore,
        Exchange::Truncated,
        Exchange::Late,
        Exchange::Endless,
        Exchange::Redirect(301),
        Exchange::Page(403),
        Exchange::Page(502),
        Exchange::RateLimited(RetryAfter::Seconds(1)),
    ];

    /// The exchange a symbol of [`Self::EXHAUSTIVE`] stands for at branch point `position`: a redirect's
    /// status, a page's status and whether the service processed the request before the page came, a
    /// reset's side of the service, an endless body's pace (fast: the size limit stops it; a trickle:
    /// the deadline) and a 429's `Retry-After` turn with the position.
    pub fn at(self, position: usize) -> Exchange {
        let after = position % 2 == 1;
        match self {
            Exchange::Redirect(_) => {
                Exchange::Redirect(Self::REDIRECTS[position % Self::REDIRECTS.len()])
            }
            Exchange::Page(status) | Exchange::PageAfter(status) => {
                let statuses: &[u16] = if status < 500 {
                    &[403, 404, 408, 413, 400, 401]
                } else {
                    &[502, 503, 504]
                };
                let status = statuses[(position / 2) % statuses.len()];
                if after {
                    Exchange::PageAfter(status)
                } else {
                    Exchange::Page(status)
                }
            }
            Exchange::ResetBefore | Exchange::ResetAfter if after => Exchange::ResetAfter,
            Exchange::ResetBefore | Exchange::ResetAfter => Exchange::ResetBefore,
            Exchange::Endless | Exchange::Trickle if after => Exchange::Trickle,
            Exchange::Endless | Exchange::Trickle => Exchange::Endless,
            Exchange::RateLimited(_) => {
                Exchange::RateLimited(Self::RETRY_AFTERS[position % Self::RETRY_AFTERS.len()])
            }
            other => other,
        }
    }

    /// The redirect statuses; with the page statuses and `Retry-After`s below, every parameter the random
    /// exploration draws from (which also draws [`Exchange::Stale`], a cache's answer, beyond the
    /// issue's set).
    pub const REDIRECTS: [u16; 5] = [301, 302, 303, 307, 308];
    /// The statuses of intermediaries' pages.
    pub const PAGES: [u16; 10] = [400, 401, 403, 404, 405, 408, 413, 502, 503, 504];
    /// The `Retry-After`s of 429s.
    pub const RETRY_AFTERS: [RetryAfter; 6] = [
        RetryAfter::Absent,
        RetryAfter::Seconds(0),
        RetryAfter::Seconds(1),
        RetryAfter::Seconds(30),
        RetryAfter::Seconds(86_400),
        RetryAfter::Garbage,
    ];

    /// A random exchange: `Deliver` with probability `deliver`, otherwise any other kind with any of its
    /// parameters.
    pub fn random(rng: &mut impl rand::Rng, deliver: f64) -> Exchange {
        if rng.random_bool(deliver) {
            return Exchange::Deliver;
        }
        let pick = |rng: &mut dyn rand::RngCore, n: usize| (rng.next_u32() as usize) % n;
        match pick(rng, 13) {
            0 => Exchange::LostBefore,
            1 => Exchange::LostAfter,
            2 => Exchange::ResetBefore,
            3 => Exchange::ResetAfter,
            4 => Exchange::Truncated,
            5 => Exchange::Late,
            6 => Exchange::Endless,
            7 => Exchange::Trickle,
            8 => Exchange::Redirect(Self::REDIRECTS[pick(rng, Self::REDIRECTS.len())]),
            9 => Exchange::Page(Self::PAGES[pick(rng, Self::PAGES.len())]),
            10 => Exchange::PageAfter(Self::PAGES[pick(rng, Self::PAGES.len())]),
            11 => Exchange::Stale,
            _ => Exchange::RateLimited(Self::RETRY_AFTERS[pick(rng, Self::RETRY_AFTERS.len())]),
        }
    }
}

impl fmt::Display for Exchange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exchange::Deliver => f.write_str("deliver"),
            Exchange::LostBefore => f.write_str("lost-before"),
            Exchange::LostAfter => f.write_str("lost-after"),
            Exchange::ResetBefore => f.write_str("reset-before"),
            Exchange::ResetAfter => f.write_str("reset-after"),
            Exchange::Truncated => f.write_str("truncated"),
            Exchange::Late => f.write_str("late"),
            Exchange::Endless => f.write_str("endless"),
            Exchange::Trickle => f.write_str("trickle"),
            Exchange::Redirect(status) => write!(f, "redirect-{status}"),
            Exchange::Page(status) => write!(f, "page-{status}"),
            Exchange::PageAfter(status) => write!(f, "page-after-{status}"),
            Exchange::RateLimited(RetryAfter::Absent) => f.write_str("429"),
            Exchange::RateLimited(RetryAfter::Seconds(seconds)) => write!(f, "429-after-{seconds}"),
            Exchange::RateLimited(RetryAfter::Garbage) => f.write_str("429-after-soon"),
            Exchange::Stale => f.write_str("stale"),
        }
    }
}

impl FromStr for Exchange {
    type Err = String;

    fn from_str(text: &str) -> Result<Exchange, String> {
        let status = |rest: &str| {
            rest.parse::<u16>()
                .map_err(|_| format!("{text:?}: not a status"))
        };
        Ok(match text {
            "deliver" => Exchange::Deliver,
            "lost-before" => Exchange::LostBefore,
            "lost-after" => Exchange::LostAfter,
            "reset-before" => Exchange::ResetBefore,
            "reset-after" => Exchange::ResetAfter,
            "truncated" => Exchange::Truncated,
            "late" => Exchange::Late,
            "endless" => Exchange::Endless,
            "trickle" => Exchange::Trickle,
            "429" => Exchange::RateLimited(RetryAfter::Absent),
            "429-after-soon" => Exchange::RateLimited(RetryAfter::Garbage),
            "stale" => Exchange::Stale,
            _ => {
                if let Some(rest) = text.strip_prefix("redirect-") {
                    Exchange::Redirect(status(rest)?)
                } else if let Some(rest) = text.strip_prefix("page-after-") {
                    Exchange::PageAfter(status(rest)?)
                } else if let Some(rest) = text.strip_prefix("page-") {
                    Exchange::Page(status(rest)?)
                } else if let Some(rest) = text.strip_prefix("429-after-") {
                    let seconds = rest
                        .parse()
                        .map_err(|_| format!("{text:?}: not a number of seconds"))?;
                    Exchange::RateLimited(RetryAfter::Seconds(seconds))
                } else {
                    return Err(format!("{text:?} is not an exchange of the model"));
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exchange_reads_back_as_itself() {
        let mut all: Vec<Exchange> = Exchange::EXHAUSTIVE.to_vec();
        all.extend(Exchange::REDIRECTS.map(Exchange::Redirect));
        all.extend(Exchange::PAGES.map(Exchange::Page));
        all.extend(Exchange::PAGES.map(Exchange::PageAfter));
        all.extend(Exchange::RETRY_AFTERS.map(Exchange::RateLimited));
        all.push(Exchange::Stale);
        for exchange in all {
            assert_eq!(exchange.to_string().parse::<Exchange>(), Ok(exchange));
        }
        assert!("page-".parse::<Exchange>().is_err());
        assert!("sideways".parse::<Exchange>().is_err());
    }
}
