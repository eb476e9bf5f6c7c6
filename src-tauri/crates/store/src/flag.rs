//! A yes/no column: stored as the integer 0 or 1 on both backends (SQLite has no boolean type,
//! and sqlx's `Any` driver decodes an SQLite integer only as an integer), read back as `bool`.

use sqlx::any::Any;
use sqlx::decode::Decode;
use sqlx::error::BoxDynError;
use sqlx::types::Type;

/// The integer a yes/no column holds; `bool::from(Flag)` is `value != 0`.
#[derive(Debug, Clone, Copy)]
pub struct Flag(i64);

impl Type<Any> for Flag {
    fn type_info() -> sqlx::any::AnyTypeInfo {
        <i64 as Type<Any>>::type_info()
    }

    fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
        <i64 as Type<Any>>::compatible(ty)
    }
}

impl<'r> Decode<'r, Any> for Flag {
    fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(Flag(<i64 as Decode<Any>>::decode(value)?))
    }
}

impl From<Flag> for bool {
    fn from(flag: Flag) -> bool {
        flag.0 != 0
    }
}
