//! The accept loop: each connection served by hyper with a handle in every request's extensions that
//! lets a handler drop the connection without answering, or reset it (the faults a proxy or a network
//! produces, on demand). axum's own `serve` offers no such handle.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::http::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;
use tower_service::Service;

/// Ends the connection a request came on, without an answer.
#[derive(Debug, Default)]
pub(crate) struct ConnectionAbort {
    notify: Notify,
    reset: AtomicBool,
    /// Holds a permit once an answer on this connection may never end by itself.
    unending: Notify,
}

impl ConnectionAbort {
    /// Closes the connection (FIN) instead of answering.
    pub fn close(&self) {
        self.notify.notify_one();
    }

    /// Resets the connection (RST) instead of answering.
    pub fn reset(&self) {
        self.reset.store(true, Ordering::SeqCst);
        self.notify.notify_one();
    }

    /// Says that the answer being sent may never end by itself (an endless or a trickling body): when
    /// the server stops, the connection is closed instead of waited for.
    pub fn unending(&self) {
        self.unending.notify_one();
    }
}

/// Serves `app` on `listener` until `stop` fires, then lets every connection finish its request in
/// flight (idle keep-alive connections close at once; one sending an answer marked
/// [`ConnectionAbort::unending`] is closed).
pub(crate) async fn serve(listener: TcpListener, app: Router, stop: impl Future<Output = ()>) {
    let (shutdown, shutting_down) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve_connection(stream, app.clone(), shutting_down.clone()));
                }
                Err(error) => {
                    // Out of file descriptors and the like: wait instead of spinning.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    let _ = shutdown.send(true);
    while connections.join_next().await.is_some() {}
}

async fn serve_connection(
    stream: TcpStream,
    app: Router,
    mut shutting_down: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    // A second handle on the socket, to set SO_LINGER 0 (an RST on close) when a fault asks for a reset.
    let resettable = duplicate(&stream);
    let abort = Arc::new(ConnectionAbort::default());
    // The handle goes into each request by hand: `Router::layer` would wrap every route once more, a
    // boxed service cloned on every request of the connection.
    let handle = abort.clone();
    let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
        request.extensions_mut().insert(handle.clone());
        app.clone().call(request)
    });
    let builder = auto::Builder::new(TokioExecutor::new());
    // Boxed rather than pinned on the stack, so that it can be dropped (closing the socket) below.
    let mut connection =
        Box::pin(builder.serve_connection_with_upgrades(TokioIo::new(stream), service));
    tokio::select! {
        _ = connection.as_mut() => return,
        () = abort.notify.notified() => {}
        () = async {
            let _ = shutting_down.wait_for(|stop| *stop).await;
        } => {
            connection.as_mut().graceful_shutdown();
            tokio::select! {
                _ = connection.as_mut() => {}
                // Dropped on return, which closes it.
                () = abort.unending.notified() => {}
            }
            return;
        }
    }
    if abort.reset.load(Ordering::SeqCst)
        && let Some(socket) = &resettable
    {
        let _ = socket.set_linger(Some(std::time::Duration::ZERO));
    }
    // Dropping the connection and then the duplicate closes the socket.
    drop(connection);
    drop(resettable);
}

/// A duplicate of the socket's descriptor (outside tokio's reactor: it is never read), whose linger
/// setting applies to the one socket both handles share.
fn duplicate(stream: &TcpStream) -> Option<socket2::Socket> {
    socket2::SockRef::from(stream).try_clone().ok()
}
