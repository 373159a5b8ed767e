\elif true
