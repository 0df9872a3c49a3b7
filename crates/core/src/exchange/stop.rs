//! Why an exchange stopped before what it waited for. (How a child is ended after each is
//! said where children are ended, `app_server.rs`: the exchange knows nothing of them.)

use crate::failure::Failure;

#[derive(Debug)]
pub enum Stop {
    /// A request failed, timed out or was answered in a shape the protocol does not promise;
    /// or stdout stopped being the protocol.
    Failed(Failure),
    /// The server closed its stdout; `waiting`: the request whose answer never came.
    Eof { waiting: Option<&'static str> },
    /// Ended at once: an abort the owner did not answer with an interrupt, an interrupt's grace
    /// that ran out, or a kill.
    Cancelled,
    /// The owner's own end: what it was there for happened (its turn completed), or it gave up
    /// (discovery's handshake probe, told everything but the answer it waits for).
    Done,
}
