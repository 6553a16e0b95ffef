//! One module per subcommand.

pub mod append;
pub mod context;
pub mod convert;
pub mod db;
pub mod doctor;
pub mod export;
pub mod export_html;
pub mod formats;
pub mod index;
pub mod ls;
pub mod migrate;
pub mod prices;
pub mod push;
pub mod resume;
pub mod scan;
pub mod scrub;
pub mod search;
pub mod seed;
pub mod serve;
pub mod show;
pub mod stats;
pub mod tree;
pub mod validate;
