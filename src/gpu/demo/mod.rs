//! What only the ready crowd scene and the demos draw (feature `scene`): the ground plane and the
//! footprints. A renderer of your own needs none of it; the runtime build leaves it out.

mod footprints;
mod ground;

pub use footprints::{FootprintRenderer, Footprints};
pub use ground::GroundRenderer;
