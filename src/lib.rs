//! herdr-link: see README.md
