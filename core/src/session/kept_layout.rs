//! The session layout kept in the cluster copy between cycles ([`Cluster::prepare`],
//! [`Cluster::prepared`]): the cluster stores it in its [`crate::cluster::kept::KeptSlot`]
//! without naming it; this layer makes, patches and reads it.

use super::layout::Layout;
use crate::cluster::kept::Kept;
use crate::cluster::Cluster;
use crate::intern::Sym;
use std::any::Any;

impl Kept for Layout {
    fn clone_box(&self) -> Box<dyn Kept> {
        Box::new(self.clone())
    }

    fn syms(&mut self, f: &mut dyn FnMut(&mut Sym)) {
        self.job_uid.iter_mut().for_each(f);
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

impl Cluster {
    /// Brings the kept session layout up to the current state, so that sessions opened before
    /// the next change only copy it (`default_queue` as `--default-queue`).
    ///
    /// A kept layout for the same default queue is patched with the changes noted since it was
    /// made ([`Layout::patch`]: only changed rows are recomputed); the first call, a different
    /// default queue, or a global change ([`crate::cluster::Changes::global`]) compute it
    /// afresh ([`Layout::new`]). Either way the result equals a fresh layout field by field.
    pub fn prepare(&mut self, default_queue: &str) {
        if self.prepared(default_queue).is_some() {
            return;
        }
        let changes = std::mem::take(&mut self.changes);
        let layout = match self.prepared.take::<Layout>() {
            Some(mut l) if l.default_queue == default_queue && !changes.global => {
                let mut spare = self.spare.take::<Layout>().unwrap_or_default();
                l.patch(self, &changes, &mut spare);
                self.spare.0 = Some(spare);
                l
            }
            _ => Box::new(Layout::new(self, default_queue)),
        };
        self.prepared.0 = Some(layout);
    }

    /// The kept layout, if it is current and made for `default_queue`.
    pub fn prepared(&self, default_queue: &str) -> Option<&Layout> {
        self.prepared.get::<Layout>().filter(|l| l.generation == self.generation() && l.default_queue == default_queue)
    }
}
