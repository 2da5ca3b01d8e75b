//! Judge access (see issue 3).
