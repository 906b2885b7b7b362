# Writes OUT, a C file holding the text of each SQL file of sql/ as a string (sql_text.h), so
# that the schema and the fleet queries have one definition: the files in the repository.
# cmake -DSQL_DIR=... -DOUT=... -P embed_sql.cmake
file(GLOB files RELATIVE ${SQL_DIR} ${SQL_DIR}/*.sql ${SQL_DIR}/fleet/*.sql)
list(SORT files)
set(text "/* Generated from sql/ by cmake/embed_sql.cmake: do not edit. */\n#include \"sql_text.h\"\n\nconst struct sql_text sql_texts[] = {\n")
foreach(f ${files})
	file(READ ${SQL_DIR}/${f} body)
	string(REPLACE "\\" "\\\\" body "${body}")
	string(REPLACE "\"" "\\\"" body "${body}")
	string(REPLACE "\n" "\\n\"\n\t\"" body "${body}")
	string(APPEND text "\t{\"${f}\",\n\t\"${body}\"},\n")
endforeach()
string(APPEND text "\t{0, 0},\n};\n")
file(WRITE ${OUT}.tmp "${text}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
