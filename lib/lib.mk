# lib/: the modules shared by relay, loadgen and the model.
LIB_OBJS := $(patsubst %.c,$(O)/%.o,$(wildcard lib/*.c))
LIB_A    := $(O)/lib/libcommon.a
$(LIB_A): $(LIB_OBJS)
