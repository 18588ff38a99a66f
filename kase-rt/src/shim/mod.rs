//! What user code calls: drop-in replacements for std's synchronisation
//! types. Outside a model each behaves like its std counterpart; inside, each
//! operation is a visible event handed to `crate::exec`.

pub mod alloc;
pub mod arc;
pub mod atomic;
pub mod barrier;
pub mod cell;
pub mod condvar;
pub mod explore;
pub mod future;
mod guard;
pub mod hint;
pub mod lazy_lock;
pub mod mpsc;
pub mod mutex;
pub mod once;
pub mod once_lock;
pub mod park;
mod poison;
pub mod rwlock;
pub mod scope;
mod static_restart;
pub mod thread;
pub mod thread_builder;
pub mod thread_local;
pub mod token;
